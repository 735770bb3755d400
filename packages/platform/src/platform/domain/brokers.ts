/**
 * Service brokers, as the real platform keeps them (api/service_broker.go, service/broker_service.go):
 * admins register, list, update and remove them; each service of a broker's catalog is a service
 * named `<broker>::<service>` (getBrokeredServices), open to every user, its calls made over OSB
 * (broker-client.ts). Catalogs are cached per broker for `cacheExpirationSeconds`, an hour by
 * default (broker_catalog_cache.go).
 */
import type { Actor, Context } from "./context.js";
import { badRequest, conflict, failed, forbidden, notFound } from "./errors.js";
import { BROKER_SERVICE_NAME, SERVICE_NAME, type Broker, type BrokerService, type Service } from "./model.js";

const DEFAULT_CATALOG_SECONDS = 60 * 60;

interface CatalogEntry {
  services: CatalogService[];
  expiresAt: number;
}

interface CatalogService {
  id: string;
  name: string;
  description: string;
  plans: BrokerService["plans"];
}

/** Catalogs by broker name, per platform (its store). */
const catalogs = new WeakMap<Context["store"], Map<string, CatalogEntry>>();

function catalogCache(context: Context): Map<string, CatalogEntry> {
  let cache = catalogs.get(context.store);
  if (!cache) catalogs.set(context.store, (cache = new Map<string, CatalogEntry>()));
  return cache;
}

/** permission.PermServiceBroker*: given to the admin team only. */
function assertAdmin(actor: Actor): void {
  // permission.ErrUnauthorized's words.
  if (!actor.admin) throw forbidden("You don't have permission to do this action");
}

function checkBroker(broker: Broker): void {
  if (!SERVICE_NAME.test(broker.name)) {
    throw badRequest(`Invalid broker name "${broker.name.slice(0, 60)}": lower-case letters, digits and "-", a letter first, at most 40 (its services are named <broker>::<service>).`);
  }
  if (!URL.canParse(broker.url) || !/^https?:$/.test(new URL(broker.url).protocol)) {
    throw badRequest(`Invalid broker URL "${broker.url.slice(0, 200)}": give the http(s) address the broker's /v2 routes are under.`);
  }
}

/** `serviceBrokerAdd`: 409 when the name is taken. */
export async function addBroker(context: Context, actor: Actor, broker: Broker): Promise<void> {
  assertAdmin(actor);
  checkBroker(broker);
  if (await context.store.get("brokers", broker.name)) throw conflict("Broker already exists.");
  await context.store.put("brokers", broker.name, broker);
}

/** `serviceBrokerUpdate` (brokerService.Update): a cache expiration of 0 keeps the old one, a negative one is 0. */
export async function updateBroker(context: Context, actor: Actor, name: string, broker: Broker): Promise<void> {
  assertAdmin(actor);
  const existing = await context.store.get("brokers", name);
  if (!existing) throw notFound("service broker not found");
  const seconds = broker.config.cacheExpirationSeconds ?? 0;
  const cacheExpirationSeconds = seconds === 0 ? existing.config.cacheExpirationSeconds : Math.max(seconds, 0);
  const updated: Broker = { ...broker, name, config: { ...broker.config, ...(cacheExpirationSeconds === undefined ? {} : { cacheExpirationSeconds }) } };
  checkBroker(updated);
  await context.store.put("brokers", name, updated);
  catalogCache(context).delete(name);
}

/** `serviceBrokerDelete`. */
export async function removeBroker(context: Context, actor: Actor, name: string): Promise<void> {
  assertAdmin(actor);
  if (!(await context.store.delete("brokers", name))) throw notFound("service broker not found");
  catalogCache(context).delete(name);
}

/** `serviceBrokerList`: the brokers, their passwords and tokens masked (the real platform shows them to admins as stored). */
export async function listBrokers(context: Context, actor: Actor): Promise<Broker[]> {
  assertAdmin(actor);
  const brokers = await context.store.all("brokers");
  return brokers.sort((a, b) => a.name.localeCompare(b.name)).map(masked);
}

function masked(broker: Broker): Broker {
  const auth = broker.config.authConfig;
  if (!auth) return broker;
  return {
    ...broker,
    config: {
      ...broker.config,
      authConfig: {
        ...(auth.basicAuthConfig ? { basicAuthConfig: { username: auth.basicAuthConfig.username, password: "*****" } } : {}),
        ...(auth.bearerConfig ? { bearerConfig: { token: "*****" } } : {}),
      },
    },
  };
}

/** The broker's catalog, from the cache while it holds; the fetch is a call of the timeline. */
async function catalogOf(context: Context, broker: Broker): Promise<CatalogService[]> {
  const cache = catalogCache(context);
  const cached = cache.get(broker.name);
  if (cached && cached.expiresAt > Date.now()) return cached.services;
  const target: Service = brokerServiceRecord(broker, { id: "", name: "", description: "", plans: [] });
  const result = await context.providers.sendOsb({ service: { ...target, name: `${broker.name}::` } }, broker, { method: "GET", path: "/v2/catalog" });
  if (result.answer?.status !== 200) {
    throw failed(`Cannot read the catalog of the broker "${broker.name}": ${result.answer ? `GET /v2/catalog answered ${result.answer.status}` : result.error ?? "no answer"}. Check its URL and credentials (PUT /brokers/${broker.name}).`);
  }
  const services = parseCatalog(result.answer.body);
  const seconds = broker.config.cacheExpirationSeconds || DEFAULT_CATALOG_SECONDS;
  cache.set(broker.name, { services, expiresAt: Date.now() + seconds * 1000 });
  return services;
}

function parseCatalog(body: string): CatalogService[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  const services = (parsed as { services?: unknown } | null)?.services;
  return (Array.isArray(services) ? (services as Array<Record<string, unknown>>) : [])
    .filter((service) => text(service.id) !== "" && text(service.name) !== "")
    .map((service) => ({
      id: text(service.id),
      name: text(service.name),
      description: text(service.description),
      plans: (Array.isArray(service.plans) ? (service.plans as Array<Record<string, unknown>>) : []).map((plan) => ({
        id: text(plan.id),
        name: text(plan.name),
        description: text(plan.description),
      })),
    }));
}

/** A catalog service as the platform's service record: open to every team, its calls going to the broker. */
function brokerServiceRecord(broker: Broker, service: CatalogService): Service {
  const basic = broker.config.authConfig?.basicAuthConfig;
  return {
    name: `${broker.name}::${service.name}`,
    username: basic?.username ?? "",
    password: basic?.password ?? "",
    endpoint: broker.url,
    variant: "current",
    encoding: "json",
    ownerTeams: [],
    teams: [],
    // newService: the catalog's description is its doc.
    doc: service.description,
    broker: { broker, serviceId: service.id, plans: service.plans },
  };
}

export function isBrokerServiceName(name: string): boolean {
  return name.includes("::");
}

/** `getBrokeredService`: `<broker>::<service>` from the broker's catalog; 404 when either is unknown. */
export async function findBrokerService(context: Context, name: string): Promise<Service> {
  const parts = BROKER_SERVICE_NAME.exec(name);
  const broker = parts && (await context.store.get("brokers", parts[1]!));
  if (!parts || !broker) throw notFound(`Service "${name}" not found.`);
  const service = (await catalogOf(context, broker)).find((candidate) => candidate.name === parts[2]);
  if (!service) throw notFound(`Service "${name}" not found.`);
  return brokerServiceRecord(broker, service);
}

/** `getBrokeredServices`: every broker's services; a broker that cannot be read is left out (said on the terminal), as the real platform logs it. */
export async function brokerServices(context: Context): Promise<Service[]> {
  const lists = await Promise.all(
    (await context.store.all("brokers")).map(async (broker) => {
      try {
        return (await catalogOf(context, broker)).map((service) => brokerServiceRecord(broker, service));
      } catch (error) {
        context.say(`[Broker=${broker.name}] error getting catalog: ${(error as Error).message}`);
        return [];
      }
    }),
  );
  return lists.flat();
}
