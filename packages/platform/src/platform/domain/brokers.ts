/**
 * Service brokers, as the real platform keeps them (api/service_broker.go, service/broker_service.go):
 * admins register, list, update and remove them; each service of a broker's catalog is a service
 * named `<broker>::<service>` (getBrokeredServices), open to every user, its calls made over OSB
 * (broker-client.ts). Catalogs are cached and their reads bounded (broker-catalog.ts).
 */
import { forgetCatalog, fullCatalog, listingCatalog, type CatalogService } from "./broker-catalog.js";
import type { Actor, Context } from "./context.js";
import { badRequest, conflict, failed, forbidden, notFound } from "./errors.js";
import { BROKER_SERVICE_NAME, SERVICE_NAME, type Broker, type Service } from "./model.js";
import { hasUserInfo } from "./osb-send.js";
import { urlWithoutCredentials } from "provider-kit/contract";

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
  // A password in the URL would be shown wherever the URL is (the call timeline, messages, the terminal).
  if (hasUserInfo(broker.url)) {
    throw badRequest("Invalid broker URL: it holds a user or password (user:password@host). Give the URL without them, and the credentials in Config.AuthConfig.BasicAuthConfig (Username, Password).");
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
  forgetCatalog(context, name);
}

/** `serviceBrokerDelete`. */
export async function removeBroker(context: Context, actor: Actor, name: string): Promise<void> {
  assertAdmin(actor);
  if (!(await context.store.delete("brokers", name))) throw notFound("service broker not found");
  forgetCatalog(context, name);
}

/** `serviceBrokerList`: the brokers, their passwords and tokens masked (the real platform shows them to admins as stored). */
export async function listBrokers(context: Context, actor: Actor): Promise<Broker[]> {
  assertAdmin(actor);
  const brokers = await context.store.all("brokers");
  return brokers.sort((a, b) => a.name.localeCompare(b.name)).map(masked);
}

function masked(stored: Broker): Broker {
  // A URL with user info, kept from before such URLs were refused, is shown without it.
  const broker = hasUserInfo(stored.url) ? { ...stored, url: urlWithoutCredentials(stored.url) } : stored;
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
  const catalog = await fullCatalog(context, broker);
  if ("failure" in catalog) throw failed(catalog.failure);
  const service = catalog.services.find((candidate) => candidate.name === parts[2]);
  if (!service) throw notFound(`Service "${name}" not found.`);
  return brokerServiceRecord(broker, service);
}

/**
 * `getBrokeredServices`: every broker's services, each catalog waited for a moment at most; a
 * broker whose catalog cannot be had is left out (and named), as the real platform logs and skips it.
 */
export async function brokerServices(context: Context): Promise<{ services: Service[]; leftOut: string[] }> {
  const brokers = await context.store.all("brokers");
  const catalogs = await Promise.all(brokers.map(async (broker) => ({ broker, catalog: await listingCatalog(context, broker) })));
  return {
    services: catalogs.flatMap(({ broker, catalog }) => ("services" in catalog ? catalog.services.map((service) => brokerServiceRecord(broker, service)) : [])),
    leftOut: catalogs.filter(({ catalog }) => "failure" in catalog).map(({ broker }) => broker.name).sort(),
  };
}
