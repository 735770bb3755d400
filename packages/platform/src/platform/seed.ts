/**
 * `--seed <file.yaml>`: the pools and clusters the platform runs with (beside its --pool and
 * --cluster flags), and users, teams, services, apps, instances and bindings created at start-up,
 * as the admin, skipping whatever already exists, so a CI job or a demo starts from a known state.
 *
 *   pools:     [{name, teams, provisioner, services}]
 *   clusters:  [{name, provisioner, addresses, pools, kubeConfig: {cluster, user}}]   (kubeConfig: propagated to providers)
 *   users:     [{email, password}]
 *   teams:     [{name, users: [email]}]
 *   services:  [{id, username, password, endpoint: {production, <cluster>}, multi-cluster, variant, encoding}]   (manifests)
 *   apps:      [{name, platform, team, pool, units}]
 *   instances: [{name, service, plan, team, pool}]
 *   bindings:  [{instance, app}]
 */
import { readFile } from "node:fs/promises";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { addUnits, bind } from "./domain/binding.js";
import { createApp } from "./domain/apps.js";
import { POOL_NAME_PATTERN } from "provider-kit/contract";
import type { Cluster, Pool } from "./domain/config.js";
import type { Actor, Context } from "./domain/context.js";
import { PlatformError } from "./domain/errors.js";
import { createInstance } from "./domain/instances.js";
import { createService } from "./domain/services.js";
import { addMember, createTeam } from "./domain/teams.js";
import { TEAM_NAME } from "./domain/model.js";
import { actorOf, createUser } from "./domain/users.js";

const NAME = z.string().regex(POOL_NAME_PATTERN, "a name of lower-case letters, digits and dashes, starting with a letter");
/** Values that become header values: printable, one line. */
const HEADER_TEXT = z.string().min(1).max(500).regex(/^[\x20-\x7e]+$/, "printable ASCII on one line");
const JSON_OBJECT = z.record(z.string(), z.json());

const POOL = z.strictObject({
  name: NAME,
  teams: z.array(z.string().regex(TEAM_NAME, "a team name")).default([]),
  provisioner: NAME.default("local"),
  services: z.array(z.string()).default([]),
});

const CLUSTER = z.strictObject({
  name: NAME,
  provisioner: NAME.default("local"),
  addresses: z.array(HEADER_TEXT).default([]),
  pools: z.array(NAME).default([]),
  kubeConfig: z.strictObject({ cluster: JSON_OBJECT, user: JSON_OBJECT }).optional(),
});

const SEED = z.strictObject({
  pools: z.array(POOL).default([]),
  clusters: z.array(CLUSTER).default([]),
  users: z.array(z.strictObject({ email: z.string(), password: z.string() })).default([]),
  teams: z.array(z.strictObject({ name: z.string(), users: z.array(z.string()).default([]) })).default([]),
  services: z.array(z.looseObject({ id: z.string() })).default([]),
  apps: z
    .array(
      z.strictObject({
        name: z.string(),
        platform: z.string().default("static"),
        team: z.string().optional(),
        pool: z.string().optional(),
        units: z.number().int().min(0).max(100).default(1),
      }),
    )
    .default([]),
  instances: z
    .array(z.strictObject({ name: z.string(), service: z.string(), plan: z.string().optional(), team: z.string().optional(), pool: z.string().optional() }))
    .default([]),
  bindings: z.array(z.strictObject({ instance: z.string(), app: z.string() })).default([]),
});

class SeedError extends Error {
  override name = "SeedError";
}

export type Seed = z.infer<typeof SEED>;

/** The seed file read and checked, before the platform starts: its pools and clusters configure it. */
export async function readSeed(file: string): Promise<Seed> {
  const text = await readFile(file, "utf8").catch((error: Error) => {
    throw new SeedError(`Cannot read the seed file ${file}: ${error.message}`);
  });
  const expanded = withEnvironment(text, file);
  let document: unknown;
  try {
    document = parse(expanded);
  } catch (error) {
    throw new SeedError(`The seed file ${file} is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = SEED.safeParse(document ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SeedError(`The seed file ${file} is not as expected at ${issue.path.join(".") || "the top"}: ${issue.message}.`);
  }
  return parsed.data;
}

/**
 * `${NAME}` and `${NAME:-default}` in the seed's text, from the environment (as Docker Compose
 * reads them): a seed names where its providers listen, and a port is the user's choice.
 */
function withEnvironment(text: string, file: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_reference, name: string, fallback: string | undefined) => {
    const value = process.env[name] || fallback;
    if (value === undefined) throw new SeedError(`The seed file ${file} reads \${${name}}, which is not set: set ${name}, or write \${${name}:-<default>} in the seed.`);
    return value;
  });
}

/** The seed's pools and clusters, as the platform's configuration holds them. */
export function seedTopology(seed: Seed): { pools: Pool[]; clusters: Cluster[] } {
  return {
    pools: seed.pools,
    clusters: seed.clusters.map(({ kubeConfig, ...cluster }) => ({ ...cluster, ...(kubeConfig ? { propagatedKubeConfig: kubeConfig } : {}) })),
  };
}

/** How long a seeded start waits, by default, for a provider it must call. */
const PROVIDER_WAIT_MS = 60_000;
const PROVIDER_RETRY_MS = 500;

/**
 * Waits (at most `waitMs`) until the provider of each service the seed must call answers, saying
 * so on the terminal: started side by side (a CI job, a demo), the platform is often up first.
 * Any HTTP answer counts; one that never comes is left to the seeding step to report.
 */
async function waitForProviders(context: Context, seed: Seed, waitMs: number): Promise<void> {
  // Each service at each pool it is called for: a multi-cluster instance's provider is its cluster's.
  const needed = new Map<string, { name: string; pool?: string }>();
  const need = (name: string, pool: string | undefined) => needed.set(`${name} ${pool ?? ""}`, { name, pool });
  for (const instance of seed.instances) if (!(await context.store.get("instances", instance.name))) need(instance.service, instance.pool);
  for (const binding of seed.bindings) {
    const instance = await context.store.get("instances", binding.instance);
    if (instance && !instance.apps.includes(binding.app)) need(instance.service, instance.pool);
  }
  const deadline = Date.now() + waitMs;
  for (const { name, pool } of needed.values()) {
    const service = await context.store.get("services", name);
    if (!service) continue;
    const target = { service, pool: service.multiCluster ? pool : undefined };
    const answers = async () => (await context.providers.send(target, context.providers.builder(service, "seed").healthcheck(), { record: false, timeoutMs: 5_000 })).answer !== undefined;
    if (await answers()) continue;
    context.say(`seed: waiting up to ${Math.round(waitMs / 1000)} s for the provider of the service ${name} (${target.pool ? `its cluster's, for the pool ${target.pool}` : service.endpoint}) to answer...`);
    let up = false;
    while (!up && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, PROVIDER_RETRY_MS));
      up = await answers();
    }
    context.say(up ? `seed: the provider of the service ${name} answers` : `seed: the provider of the service ${name} did not answer within ${Math.round(waitMs / 1000)} s`);
  }
}

/** Creates what the seed lists and the store lacks; waits up to `providerWaitMs` for the providers it calls. */
export async function applySeed(context: Context, adminEmail: string, seed: Seed, providerWaitMs = PROVIDER_WAIT_MS): Promise<void> {
  const { store } = context;
  const admin = async (): Promise<Actor> => actorOf(context, adminEmail);
  const step = async (what: string, work: () => Promise<unknown>) => {
    try {
      await work();
    } catch (error) {
      throw new SeedError(`Seeding ${what} failed: ${(error as Error).message}`);
    }
  };

  for (const user of seed.users) {
    if (!(await store.get("users", user.email))) await step(`user ${user.email}`, () => createUser(context, user.email, user.password));
  }
  for (const team of seed.teams) {
    if (!(await store.get("teams", team.name))) await step(`team ${team.name}`, async () => createTeam(context, await admin(), team.name));
    for (const email of team.users) {
      const members = (await store.get("teams", team.name))?.users ?? [];
      if (!members.includes(email)) await step(`member ${email} of ${team.name}`, async () => addMember(context, await admin(), team.name, email));
    }
  }
  for (const manifest of seed.services) {
    if (!(await store.get("services", manifest.id))) await step(`service ${manifest.id}`, async () => createService(context, await admin(), stringify(manifest)));
  }
  for (const app of seed.apps) {
    if (await store.get("apps", app.name)) continue;
    await step(`app ${app.name}`, async () => {
      await createApp(context, await admin(), { name: app.name, platform: app.platform, teamOwner: app.team, pool: app.pool });
      if (app.units > 1) await addUnits(context, await admin(), app.name, app.units - 1);
    });
  }
  await waitForProviders(context, seed, providerWaitMs);
  for (const instance of seed.instances) {
    if (await store.get("instances", instance.name)) continue;
    await step(`instance ${instance.name}`, async () => {
      try {
        await createInstance(context, await admin(), { name: instance.name, service: instance.service, plan: instance.plan, owner: instance.team, pool: instance.pool });
      } catch (error) {
        if (!(error instanceof PlatformError && error.status === 409 && error.message.startsWith("Failed to create"))) throw error;
        // The provider kept the instance of an earlier platform whose state is gone (a fresh data directory).
        throw new PlatformError(
          `the provider of the service ${instance.service} already has an instance "${instance.name}" (${error.message}). A fresh data directory does not know it: ` +
            `start the platform on its earlier --data-dir, or remove the instance at the provider (or restart the provider with empty state) and start again.`,
          409,
        );
      }
    });
  }
  for (const binding of seed.bindings) {
    const instance = await store.get("instances", binding.instance);
    // A bind cut off by the last stop is being undone (it holds the locks first): seed it again after.
    if (instance?.apps.includes(binding.app) && !instance.pendingBinds?.includes(binding.app)) continue;
    await step(`binding of ${binding.instance} to ${binding.app}`, async () => bind(context, await admin(), binding.instance, binding.app));
  }
}
