/**
 * Service instances: the provider is called first, then the platform's own record is written
 * (and the provider's instance removed again if that write fails), as the real platform does.
 */
import { exclusive, sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, conflict, failed, forbidden, notFound } from "./errors.js";
import { clusterOf } from "./config.js";
import { assertPoolFor, poolChoices } from "./pools.js";
import { type Instance, type Service } from "./model.js";
import { providerProblem, statusOf, succeeded, type PlatformCallResult } from "./provider-answer.js";
import { forcing, undoing } from "./operation.js";
import { providerInfo } from "./instance-info.js";
import { findService, mayUse } from "./services.js";
import { INSTANCE_NAME_PATTERN, printable, STATUS_TEXT_MAX_LENGTH } from "provider-kit/contract";
import type { ParameterTree } from "provider-kit/contract";

export const instanceLock = (name: string) => `instance:${name}`;

export async function findInstance(context: Context, name: string): Promise<Instance> {
  const instance = await context.store.get("instances", name);
  if (!instance) throw notFound(`Service instance "${name}" not found.`);
  return instance;
}

export function assertInstanceAccess(actor: Actor, instance: Instance): void {
  if (!sharesTeam(actor, instance.teams)) throw forbidden(`You have no access to the service instance "${instance.name}".`);
}

export interface NewInstance {
  name: string;
  service: string;
  plan?: string;
  owner?: string;
  /** The pool it lives in: required for a multi-cluster service, refused for any other. */
  pool?: string;
  /** Kept, and sent with the provider's create as today's platform sends them (the `current` variant). */
  description?: string;
  tags?: string[];
  parameters?: ParameterTree;
}

export async function createInstance(context: Context, actor: Actor, wanted: NewInstance): Promise<Instance> {
  if (!INSTANCE_NAME_PATTERN.test(wanted.name)) {
    throw badRequest("Invalid service instance name: start with a letter, then letters, digits, dashes or underscores (at least 2 characters).");
  }
  const service = await findService(context, wanted.service);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${service.name}".`);
  const allowed = actor.teams.filter((team) => service.teams.includes(team));
  const ownerTeam = chooseOwner(actor, allowed.length > 0 ? allowed : actor.teams, wanted.owner);
  if (!(await context.store.get("teams", ownerTeam))) throw badRequest("Team owner doesn't exist");
  const pool = instancePool(context, service, wanted.pool || undefined, ownerTeam);

  return exclusive(context, [instanceLock(wanted.name)], async () => {
    // validateServiceInstanceName's words, with createServiceInstance's 409.
    if (await context.store.get("instances", wanted.name)) throw conflict("instance name already exists.");
    const target = { service, instance: wanted.name, pool };
    const calls = context.providers.builder(service, actor.email);
    const created = await context.providers.send(
      target,
      calls.create({ name: wanted.name, team: ownerTeam, plan: wanted.plan, description: wanted.description, tags: wanted.tags, parameters: wanted.parameters }),
    );
    if (!succeeded(created)) {
      // A broker's failure is brokerClient.Create's error as it is (a plain error: 500); a provider's, the endpoint's words.
      if (created.brokerProblem !== undefined) throw failed(created.brokerProblem);
      const message = `Failed to create the instance ${wanted.name}: ${providerProblem(created)}`;
      throw statusOf(created) === 409 ? conflict(message) : failed(message);
    }
    const instance: Instance = {
      name: wanted.name,
      service: service.name,
      plan: wanted.plan,
      ...(pool === undefined ? {} : { pool }),
      ...(wanted.description === undefined ? {} : { description: wanted.description }),
      ...(wanted.tags === undefined ? {} : { tags: wanted.tags }),
      ...(wanted.parameters === undefined ? {} : { parameters: wanted.parameters }),
      ownerTeam,
      // The owner team only, as CreateServiceInstance sets Teams: other teams get access by a grant.
      teams: [ownerTeam],
      apps: [],
      boundUnits: {},
    };
    try {
      await context.store.put("instances", instance.name, instance);
    } catch (error) {
      await undoing(() => context.providers.send(target, calls.destroy(instance.name))); // undo: the provider's instance goes too
      throw error;
    }
    return instance;
  });
}

/**
 * The instance's pool, by today's platform's rules: an instance of a multi-cluster service lives
 * in a pool that exists, admits the service and is open to the owner team (assertPoolFor); any
 * other instance in none.
 */
function instancePool(context: Context, service: Service, pool: string | undefined, ownerTeam: string): string | undefined {
  if (!service.multiCluster) {
    if (pool !== undefined) throw badRequest(`regular (non-multi-cluster) service instance cannot belong to a pool: the service "${service.name}" is not multi-cluster, create the instance without a pool.`);
    return undefined;
  }
  if (pool === undefined) throw badRequest(`multi-cluster service instance requires a pool: ${poolChoices(context, service.name, { team: ownerTeam })}.`);
  assertPoolFor(context, service.name, pool, { team: ownerTeam });
  return pool;
}

function chooseOwner(actor: Actor, teams: string[], owner: string | undefined): string {
  if (owner !== undefined) {
    if (!actor.admin && !actor.teams.includes(owner)) throw forbidden(`You are not a member of the team "${owner}".`);
    return owner;
  }
  if (teams.length === 1) return teams[0]!;
  if (teams.length === 0) throw forbidden("You must be a member of a team to create a service instance.");
  throw badRequest(`You belong to several teams: say which one owns the instance with "owner" (one of ${teams.join(", ")}).`);
}

/** The whole new state of an instance, as `updateServiceInstance` reads it: a field left out is emptied. */
export interface InstanceUpdate {
  description: string;
  plan: string;
  teamOwner: string;
  tags: string[];
  parameters: ParameterTree;
}

/**
 * `updateServiceInstance`: the record changed, then the provider's `PUT /resources/<i>` with the
 * whole new state (the endpoint's `Update`: a 404 is success); any other failure restores the
 * record and reaches the user as "Failed to update the instance <i>: ...".
 */
export async function updateInstance(context: Context, actor: Actor, name: string, wanted: InstanceUpdate): Promise<void> {
  await exclusive(context, [instanceLock(name)], async () => {
    const instance = await findInstance(context, name);
    assertInstanceAccess(actor, instance);
    // `Update` keeps the tags when none are sent.
    const tags = wanted.tags.length > 0 ? wanted.tags : (instance.tags ?? []);
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
    const unchanged =
      (instance.description ?? "") === wanted.description &&
      instance.ownerTeam === wanted.teamOwner &&
      (instance.plan ?? "") === wanted.plan &&
      same(instance.tags ?? [], wanted.tags) &&
      same(instance.parameters ?? {}, wanted.parameters);
    if (unchanged) throw badRequest("Neither description, team owner, tags, plan nor plan parameters were set. You must define at least one.");
    // validateServiceInstanceTeamOwner's words.
    if (wanted.teamOwner === "") throw badRequest("please specify the team that owns the service instance");
    if (!(await context.store.get("teams", wanted.teamOwner))) throw badRequest("Team owner doesn't exist");
    const updated: Instance = {
      ...instance,
      description: wanted.description,
      plan: wanted.plan || undefined,
      ownerTeam: wanted.teamOwner,
      // The new owner team is added to the teams; the old one keeps its access.
      teams: instance.teams.includes(wanted.teamOwner) ? instance.teams : [...instance.teams, wanted.teamOwner],
      tags,
      parameters: wanted.parameters,
    };
    await context.store.put("instances", name, updated);
    const service = await findService(context, instance.service);
    const result = await context.providers.send(
      { service, instance: name, pool: instance.pool },
      context.providers.builder(service, actor.email).update({ name, team: updated.ownerTeam, plan: updated.plan, description: updated.description, tags, parameters: updated.parameters }),
    );
    if (succeeded(result) || statusOf(result) === 404) return;
    await context.store.put("instances", name, instance);
    throw failed(`Failed to update the instance ${name}: ${providerProblem(result)}`);
  });
}

export interface RemovalOptions {
  /** Remove the platform's record even when the provider fails to destroy the instance (`?ignoreerrors=true`). */
  ignoreErrors?: boolean;
  /** Where the failure passed over is said too (the client's stream). */
  say?: (message: string) => void;
}

export async function removeInstance(context: Context, actor: Actor, name: string, { ignoreErrors = false, say = () => {} }: RemovalOptions = {}): Promise<void> {
  await exclusive(context, [instanceLock(name)], async () => {
    const instance = await findInstance(context, name);
    assertInstanceAccess(actor, instance);
    if (instance.apps.length > 0) {
      throw badRequest(`This service instance is bound to at least one app. Unbind them before removing it, or remove it with ?unbindall=true (bound: ${instance.apps.join(", ")}).`);
    }
    const service = await findService(context, instance.service);
    const destroy = () => context.providers.send({ service, instance: name, pool: instance.pool }, context.providers.builder(service, actor.email).destroy(name));
    const removed = await (ignoreErrors ? forcing(destroy) : destroy());
    if (!succeeded(removed)) {
      // Destroy's words: a 404 is its own error, anything else wrapped.
      const failure = statusOf(removed) === 404 ? "instance does not exist in the service API" : `Failed to destroy the instance ${name}: ${providerProblem(removed)}`;
      if (!ignoreErrors) throw failed(mayBeGone(removed) ? `${failure} (if the provider no longer has it, remove it with ?ignoreerrors=true)` : failure);
      const passedOver = `could not delete the service instance on service api: ${failure}. ignoring this error due to force removal...`;
      context.say(passedOver);
      say(`${passedOver}\n`);
    }
    await context.store.delete("instances", name);
  });
}

/**
 * Whether a failed destroy leaves the provider's instance possibly gone: it says so (404, 410) or
 * cannot be reached. Any other answer means it still has it, so forcing the removal is no advice.
 */
function mayBeGone(result: PlatformCallResult): boolean {
  const status = statusOf(result);
  return status === 404 || status === 410 || (result.answer === undefined && result.brokerProblem === undefined);
}

/** `Service instance "<i>" is <state>`, with no final dot, as `serviceInstanceStatus` writes it. */
export async function instanceStatus(context: Context, actor: Actor, name: string): Promise<string> {
  const instance = await findInstance(context, name);
  assertInstanceAccess(actor, instance);
  return `Service instance "${name}" is ${await providerState(context, actor, instance)}`;
}

/**
 * The instance's state from the provider's status answer, as the endpoint's `Status` reads it
 * (platform-notes.md); `timeoutMs` shortens the wait when the state only adds to a message.
 */
export async function providerState(context: Context, actor: Actor, instance: Instance, timeoutMs?: number): Promise<string> {
  const service = await findService(context, instance.service);
  const result = await context.providers.send(
    { service, instance: instance.name, pool: instance.pool },
    context.providers.builder(service, actor.email).status(instance.name),
    timeoutMs === undefined ? {} : { timeoutMs },
  );
  // brokerClient.Status: any last_operation answer but 200 is an error, which serviceInstanceStatus wraps (500).
  if (result.brokerProblem !== undefined) throw failed(`Could not retrieve status of service instance, error: ${result.brokerProblem}`);
  if (!result.answer) throw failed(`Failed to get status of instance ${instance.name}: ${providerProblem(result)}`);
  const { status, body } = result.answer;
  // Whatever the provider (in any language) wrote: one printable line, cut at the contract's limit.
  const text = printable(body, { oneLine: true, maxLength: STATUS_TEXT_MAX_LENGTH });
  // A 202 may carry the step's progress as text (provider-kit's `ctx.progress`): today's platform
  // shows only "pending"; this one adds the text, so a slow create says how it goes.
  return status === 202 ? (text === "" ? "pending" : `pending (${text})`)
    : status === 204 ? "up"
    : status === 200 ? (service.variant === "current" && text !== "" ? text : "up")
    : status === 404 ? "not implemented for this service"
    : "down";
}

export async function instanceData(context: Context, actor: Actor, name: string) {
  const instance = await findInstance(context, name);
  assertInstanceAccess(actor, instance);
  // Beyond the spec's four fields: the plan and owner team (the real platform's planname and teamowner),
  // `info`, the provider's extra info (its CustomInfo), and `status`, the provider's last status
  // answer as the instance-status healer saw it.
  return {
    name,
    servicename: instance.service,
    teams: instance.teams,
    apps: instance.apps,
    planname: instance.plan ?? "",
    teamowner: instance.ownerTeam,
    ...(instance.pool === undefined ? {} : { pool: instance.pool, cluster: clusterOf(context.config, instance.pool)?.name ?? "" }),
    info: await providerInfo(context, actor, await findService(context, instance.service), instance),
    ...(instance.status ? { status: instance.status } : {}),
  };
}

export async function grantInstance(context: Context, actor: Actor, name: string, team: string): Promise<void> {
  await changeTeams(context, actor, name, team, (instance) => {
    if (instance.teams.includes(team)) throw conflict(`The team "${team}" already has access to the service instance "${name}".`);
    return [...instance.teams, team];
  });
}

export async function revokeInstance(context: Context, actor: Actor, name: string, team: string): Promise<void> {
  await changeTeams(context, actor, name, team, (instance) => {
    if (!instance.teams.includes(team)) throw notFound(`The team "${team}" has no access to the service instance "${name}".`);
    if (team === instance.ownerTeam) throw forbidden(`The team "${team}" owns the service instance "${name}": its access cannot be revoked.`);
    return instance.teams.filter((item) => item !== team);
  });
}

async function changeTeams(
  context: Context,
  actor: Actor,
  name: string,
  team: string,
  change: (instance: Instance) => string[],
): Promise<void> {
  await exclusive(context, [instanceLock(name)], async () => {
    const instance = await findInstance(context, name);
    assertInstanceAccess(actor, instance);
    if (!(await context.store.get("teams", team))) throw notFound(`Team "${team}" not found.`);
    await context.store.put("instances", name, { ...instance, teams: change(instance) });
  });
}
