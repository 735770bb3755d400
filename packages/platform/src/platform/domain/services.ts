/** The service catalog: register providers from their manifests, document and share them. */
import { isPoolRequired } from "provider-kit/contract";
import { plansProblem, urlWithoutCredentials } from "provider-kit/contract";
import { poolsOf } from "./config.js";
import { assertPoolFor } from "./pools.js";
import { sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, conflict, failed, forbidden, notFound } from "./errors.js";
import { parseManifest, type Manifest } from "./manifest.js";
import type { Instance, ProviderCall, Service } from "./model.js";
import { providerInfo } from "./instance-info.js";
import { brokerServices, findBrokerService, isBrokerServiceName } from "./brokers.js";
import { statusOf } from "./provider-answer.js";
import type { CallEntry } from "../store/store.js";
import type { CallFilter, CallPage } from "./provider-calls.js";

export async function findService(context: Context, name: string): Promise<Service> {
  // service.Get: a name with the broker separator is a broker's service (isBrokeredService).
  if (isBrokerServiceName(name)) return findBrokerService(context, name);
  const service = await context.store.get("services", name);
  if (!service) throw notFound(`Service "${name}" not found.`);
  return service;
}

/** A user may create instances of a service one of their teams has access to. */
export function mayUse(actor: Actor, service: Service): boolean {
  // A broker's services are not restricted to teams.
  return service.broker !== undefined || sharesTeam(actor, service.teams);
}

export function assertOwner(actor: Actor, service: Service): void {
  // The real platform's words for any change to a broker's service.
  if (service.broker) throw badRequest("Brokered services are not managed.");
  if (!sharesTeam(actor, service.ownerTeams)) throw forbidden(`You are not in a team that owns the service "${service.name}".`);
}

export async function createService(context: Context, actor: Actor, yaml: string): Promise<Service> {
  return registerService(context, actor, parseManifest(yaml));
}

export async function registerService(context: Context, actor: Actor, manifest: Manifest): Promise<Service> {
  if (actor.teams.length === 0) throw forbidden("You must be a member of a team to register a service: create a team first.");
  const ownerTeam = await serviceOwner(context, actor, manifest.team);
  if (await context.store.get("services", manifest.id)) throw failed(`Service "${manifest.id}" already exists.`);
  const { id, team: _team, ...connection } = manifest;
  const service: Service = { name: id, ...connection, ...kubeConfigRight(actor), ownerTeams: [ownerTeam], teams: [ownerTeam], doc: "" };
  await context.store.put("services", id, service);
  return service;
}

/**
 * One owner team, as `serviceCreate` picks it: the manifest's `team` (the user's, or any for an
 * admin), else the user's only team (TeamForPermission); several and none named is a 400.
 */
async function serviceOwner(context: Context, actor: Actor, team: string | undefined): Promise<string> {
  if (team === undefined) {
    if (actor.teams.length === 1) return actor.teams[0]!;
    throw badRequest("You must provide a team responsible for this service in the manifest file.");
  }
  if (!actor.admin && !actor.teams.includes(team)) throw forbidden(`You are not a member of the team "${team.slice(0, 60)}".`);
  // validateOwnerTeams' words.
  if (!(await context.store.get("teams", team))) throw badRequest("Team owner doesn't exist");
  return team;
}

export async function updateService(context: Context, actor: Actor, yaml: string): Promise<void> {
  const { id, team: _team, ...connection } = parseManifest(yaml);
  const service = await findService(context, id);
  assertOwner(actor, service);
  const { receivesKubeConfig: _dropped, ...kept } = service;
  await context.store.put("services", id, { ...kept, ...connection, ...kubeConfigRight(actor) });
}

/** A cluster's kube config goes only where an admin chose to send it: the endpoints of a manifest an admin gave. */
const kubeConfigRight = (actor: Actor): Pick<Service, "receivesKubeConfig"> => (actor.admin ? { receivesKubeConfig: true } : {});

export async function removeService(context: Context, actor: Actor, name: string): Promise<void> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  if ((await instancesOf(context, name)).length > 0) throw forbidden("This service cannot be removed because it has instances.");
  await context.store.delete("services", name);
}

async function instancesOf(context: Context, service: string): Promise<Instance[]> {
  return (await context.store.all("instances")).filter((instance) => instance.service === service);
}

/**
 * The service's instances its provider answers 404 for on status: ones it does not know, as after
 * a restart of a provider whose registry lives in its memory. Only its owners may ask.
 */
export async function instancesUnknownToProvider(context: Context, actor: Actor, name: string): Promise<string[]> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  const calls = context.providers.builder(service, actor.email);
  const answers = await Promise.all(
    (await instancesOf(context, name)).map(async (instance) => {
      const result = await context.providers.send({ service, instance: instance.name, pool: instance.pool }, calls.status(instance.name));
      return result.answer?.status === 404 ? instance.name : undefined;
    }),
  );
  return answers.filter((instance) => instance !== undefined);
}

/**
 * `[{service, instances}]` for the services the actor may use, with the instances their teams see,
 * and the brokers left out of it (their catalog could not be had in time).
 */
export async function listServices(context: Context, actor: Actor, app?: string) {
  const [native, brokered, instances] = await Promise.all([context.store.all("services"), brokerServices(context), context.store.all("instances")]);
  const entries = [...native, ...brokered.services]
    .filter((service) => mayUse(actor, service))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((service) => ({
      service: service.name,
      instances: instances
        .filter((instance) => instance.service === service.name && sharesTeam(actor, instance.teams))
        .filter((instance) => app === undefined || instance.apps.includes(app))
        .map((instance) => instance.name)
        .sort(),
    }));
  return { entries, leftOut: brokered.leftOut };
}

/**
 * The calls the actor may see: all for admins and for the teams owning the call's service;
 * otherwise those of services it may use, about instances and apps of its teams only, since a
 * call carries another team's addresses, apps and users.
 */
export async function providerCallsFor(context: Context, actor: Actor, filter: CallFilter, page: CallPage): Promise<{ calls: ProviderCall[]; total: number }> {
  if (actor.admin) return context.providers.page(filter, () => true, page);
  const [services, instances, apps] = await Promise.all([context.store.all("services"), context.store.all("instances"), context.store.all("apps")]);
  const teamsOf = (items: Array<{ name: string; teams: string[] }>) => new Map(items.map((item) => [item.name, item.teams]));
  const [instanceTeams, appTeams] = [teamsOf(instances), teamsOf(apps)];
  const owned = new Set(services.filter((service) => sharesTeam(actor, service.ownerTeams)).map((service) => service.name));
  const usable = new Set(services.filter((service) => mayUse(actor, service)).map((service) => service.name));
  const mine = (teams: string[] | undefined) => teams !== undefined && sharesTeam(actor, teams);
  // A proxied call about no instance or app (its body included) is its sender's teams' business only.
  const senders = (entry: CallEntry) => entry.senderTeams === undefined || entry.instance !== undefined || entry.app !== undefined || mine(entry.senderTeams);
  return context.providers.page(
    filter,
    (entry) =>
      owned.has(entry.service) ||
      ((usable.has(entry.service) || isBrokerServiceName(entry.service)) &&
        senders(entry) &&
        (entry.instance === undefined || mine(instanceTeams.get(entry.instance))) &&
        (entry.app === undefined || mine(appTeams.get(entry.app)))),
    page,
  );
}

/** How the platform talks to the service's provider (beyond the spec, for the console); never its credentials. */
export async function providerOf(context: Context, actor: Actor, name: string) {
  const service = await findService(context, name);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${name}".`);
  return { service: service.name, endpoint: urlWithoutCredentials(service.endpoint), variant: service.variant, encoding: service.encoding, teams: service.teams };
}

/** A listing waits this long at most for the provider's plans. */
const PLANS_TIMEOUT_MS = 10_000;

/**
 * `GET /services/<s>/plans[?pool=<p>]`: the provider's plans; for a multi-cluster service, those of
 * the pool asked for (the provider gets its X-Tsuru-* headers). A provider's 400 naming the
 * missing `cluster` means it needs a pool; any other answer but a plan list is no plans.
 */
export async function servicePlans(context: Context, actor: Actor, name: string, pool: string | undefined): Promise<Array<{ name: string; description: string }>> {
  const service = await findService(context, name);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${name}".`);
  const asked = service.multiCluster && pool ? pool : undefined;
  if (asked !== undefined) assertPoolFor(context, service.name, asked, { actor });
  const result = await context.providers.send({ service, pool: asked }, context.providers.builder(service, actor.email).plans(), { timeoutMs: PLANS_TIMEOUT_MS });
  const body = result.answer?.body ?? "";
  if (isPoolRequired(statusOf(result) ?? 0, body)) {
    const pools = actor.admin ? context.config.pools : actor.teams.flatMap((team) => poolsOf(context.config, team));
    throw badRequest(`You must provide the pool name, available pools: ${[...new Set(pools.map((item) => item.name))].join(", ")}`);
  }
  if (statusOf(result) !== 200 || plansProblem(body) !== undefined) return [];
  return (JSON.parse(body) as Array<{ name: string; description: string }>).map((plan) => ({ name: plan.name, description: plan.description }));
}

/** The service's doc, for the users who may use the service (as `GET /services/<s>`). */
export async function serviceDoc(context: Context, actor: Actor, name: string): Promise<string> {
  const service = await findService(context, name);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${name}".`);
  return service.doc;
}

/** The spec's instance records, each with `Info`, the provider's extra info, as the platform lists them (its calls at once). */
export async function serviceInstances(context: Context, actor: Actor, name: string) {
  const service = await findService(context, name);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${name}".`);
  const instances = (await instancesOf(context, name)).filter((instance) => sharesTeam(actor, instance.teams));
  return Promise.all(
    instances.map(async (instance) => ({
      Name: instance.name,
      Teams: instance.teams,
      Apps: instance.apps,
      ServiceName: name,
      Info: await providerInfo(context, actor, service, instance),
    })),
  );
}

export async function setDoc(context: Context, actor: Actor, name: string, doc: string): Promise<void> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  await context.store.put("services", name, { ...service, doc });
}

export async function grantService(context: Context, actor: Actor, name: string, team: string): Promise<void> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  if (!(await context.store.get("teams", team))) throw notFound(`Team "${team}" not found.`);
  if (service.teams.includes(team)) throw conflict(`The team "${team}" already has access to the service "${name}".`);
  await context.store.put("services", name, { ...service, teams: [...service.teams, team] });
}

export async function revokeService(context: Context, actor: Actor, name: string, team: string): Promise<void> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  if (!service.teams.includes(team)) throw notFound(`The team "${team}" has no access to the service "${name}".`);
  if (service.teams.length === 1) throw forbidden("You can not revoke the access from this team, because it is the unique team with access to this service, and a service can not be orphaned.");
  await context.store.put("services", name, { ...service, teams: service.teams.filter((item) => item !== team) });
}
