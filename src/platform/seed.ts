/**
 * `--seed <file.yaml>`: users, teams, services, apps, instances and bindings created at start-up,
 * as the admin, skipping whatever already exists, so a CI job or a demo starts from a known state.
 *
 *   users:     [{email, password}]
 *   teams:     [{name, users: [email]}]
 *   services:  [{id, username, password, endpoint: {production}, variant, encoding}]   (manifests)
 *   apps:      [{name, platform, team, units}]
 *   instances: [{name, service, plan, team}]
 *   bindings:  [{instance, app}]
 */
import { readFile } from "node:fs/promises";
import { parse, stringify } from "yaml";
import { z } from "zod";
import { addUnits, bind } from "./domain/binding.js";
import { createApp } from "./domain/apps.js";
import type { Actor, Context } from "./domain/context.js";
import { createInstance } from "./domain/instances.js";
import { createService } from "./domain/services.js";
import { addMember, createTeam } from "./domain/teams.js";
import { actorOf, createUser } from "./domain/users.js";

const SEED = z.strictObject({
  users: z.array(z.strictObject({ email: z.string(), password: z.string() })).default([]),
  teams: z.array(z.strictObject({ name: z.string(), users: z.array(z.string()).default([]) })).default([]),
  services: z.array(z.looseObject({ id: z.string() })).default([]),
  apps: z
    .array(z.strictObject({ name: z.string(), platform: z.string().default("static"), team: z.string().optional(), units: z.number().int().min(0).max(100).default(1) }))
    .default([]),
  instances: z.array(z.strictObject({ name: z.string(), service: z.string(), plan: z.string().optional(), team: z.string().optional() })).default([]),
  bindings: z.array(z.strictObject({ instance: z.string(), app: z.string() })).default([]),
});

export class SeedError extends Error {
  override name = "SeedError";
}

export async function applySeed(context: Context, adminEmail: string, file: string): Promise<void> {
  const text = await readFile(file, "utf8").catch((error: Error) => {
    throw new SeedError(`Cannot read the seed file ${file}: ${error.message}`);
  });
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new SeedError(`The seed file ${file} is not valid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  const parsed = SEED.safeParse(document ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new SeedError(`The seed file ${file} is not as expected at ${issue.path.join(".") || "the top"}: ${issue.message}.`);
  }
  const seed = parsed.data;
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
      await createApp(context, await admin(), { name: app.name, platform: app.platform, teamOwner: app.team });
      if (app.units > 1) await addUnits(context, await admin(), app.name, app.units - 1);
    });
  }
  for (const instance of seed.instances) {
    if (await store.get("instances", instance.name)) continue;
    await step(`instance ${instance.name}`, async () =>
      createInstance(context, await admin(), { name: instance.name, service: instance.service, plan: instance.plan, owner: instance.team }),
    );
  }
  for (const binding of seed.bindings) {
    const instance = await store.get("instances", binding.instance);
    if (instance?.apps.includes(binding.app)) continue;
    await step(`binding of ${binding.instance} to ${binding.app}`, async () => bind(context, await admin(), binding.instance, binding.app));
  }
}
