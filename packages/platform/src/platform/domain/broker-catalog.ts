/**
 * The brokers' catalogs, cached per platform as the real platform's ServiceBrokerCatalogCache
 * does (broker_catalog_cache.go: a catalog kept `cacheExpirationSeconds`, an hour by default),
 * and bounded so that no broker can stall a listing:
 *   - a read gives up after CATALOG_TIMEOUT_MS, and reads at most 1 MiB (osb-send.ts);
 *   - a listing waits LISTING_WAIT_MS at most for a read in flight, then goes on without it
 *     (serving the last good catalog when there is one), the read finishing in the background;
 *   - a failed read is remembered FAILURE_MEMORY_MS: no read before that, the last good catalog
 *     served meanwhile, the failure said once on the terminal.
 */
import { printable } from "provider-kit/contract";
import type { Context } from "./context.js";
import type { Broker, BrokerService, Service } from "./model.js";
import { urlWithoutCredentials } from "provider-kit/contract";

/** "A few seconds": a broker's catalog is small, a slow one is left out of the listings until it answers. */
const CATALOG_TIMEOUT_MS = 5_000;
/** A listing answers within 2 s whatever one broker does. */
const LISTING_WAIT_MS = 1_000;
const FAILURE_MEMORY_MS = 30_000;
const DEFAULT_CATALOG_SECONDS = 60 * 60;

export interface CatalogService {
  id: string;
  name: string;
  description: string;
  plans: BrokerService["plans"];
}

interface CatalogEntry {
  good?: { services: CatalogService[]; expiresAt: number };
  failure?: { message: string; until: number };
  reading?: Promise<void>;
}

/** A catalog, or why there is none. */
export type CatalogOutcome = { services: CatalogService[] } | { failure: string };

/** Entries by broker name, per platform (its store). */
const caches = new WeakMap<Context["store"], Map<string, CatalogEntry>>();

function cacheOf(context: Context): Map<string, CatalogEntry> {
  let cache = caches.get(context.store);
  if (!cache) caches.set(context.store, (cache = new Map<string, CatalogEntry>()));
  return cache;
}

/** Forgets the broker's catalog (its registration changed or went). */
export function forgetCatalog(context: Context, name: string): void {
  cacheOf(context).delete(name);
}

/** The catalog for a listing: waits LISTING_WAIT_MS at most. */
export function listingCatalog(context: Context, broker: Broker): Promise<CatalogOutcome> {
  return catalogOf(context, broker, LISTING_WAIT_MS);
}

/** The catalog for a call about one of the broker's services: waits for the read (itself bounded). */
export function fullCatalog(context: Context, broker: Broker): Promise<CatalogOutcome> {
  return catalogOf(context, broker, CATALOG_TIMEOUT_MS + 1_000);
}

async function catalogOf(context: Context, broker: Broker, waitMs: number): Promise<CatalogOutcome> {
  const cache = cacheOf(context);
  let entry = cache.get(broker.name);
  if (!entry) cache.set(broker.name, (entry = {}));
  const now = Date.now();
  if (entry.good && entry.good.expiresAt > now) return { services: entry.good.services };
  if (!(entry.failure && entry.failure.until > now)) {
    entry.reading ??= read(context, broker, entry);
    await within(entry.reading, waitMs);
  }
  // Fresh, or the last good one while a read fails or is slow.
  if (entry.good) return { services: entry.good.services };
  if (entry.failure) return { failure: entry.failure.message };
  return { failure: `its catalog did not come within ${waitMs / 1000} s (still reading it)` };
}

/** Reads the catalog into the entry; never throws. */
async function read(context: Context, broker: Broker, entry: CatalogEntry): Promise<void> {
  const target: Service = {
    name: `${broker.name}::`,
    username: "",
    password: "",
    endpoint: urlWithoutCredentials(broker.url),
    variant: "current",
    encoding: "json",
    ownerTeams: [],
    teams: [],
    doc: "",
  };
  try {
    const result = await context.providers.sendOsb({ service: target }, broker, { method: "GET", path: "/v2/catalog" }, { timeoutMs: CATALOG_TIMEOUT_MS });
    const services = result.answer?.status === 200 ? parseCatalog(result.answer.body) : undefined;
    if (services) {
      const seconds = broker.config.cacheExpirationSeconds || DEFAULT_CATALOG_SECONDS;
      entry.good = { services, expiresAt: Date.now() + seconds * 1000 };
      delete entry.failure;
      return;
    }
    const why = result.answer?.status === 200 ? "GET /v2/catalog answered 200 with no catalog (a JSON object with `services`)" : result.answer ? `GET /v2/catalog answered ${result.answer.status}` : (result.error ?? "no answer");
    const message = `Cannot read the catalog of the broker "${broker.name}": ${why}. Check its URL and credentials (PUT /brokers/${broker.name}); the platform reads it again in ${FAILURE_MEMORY_MS / 1000} s.`;
    entry.failure = { message, until: Date.now() + FAILURE_MEMORY_MS };
    // getBrokeredServices' log line.
    context.say(`[Broker=${broker.name}] error getting catalog: ${message}`);
  } finally {
    delete entry.reading;
  }
}

/** Resolves when `work` settles or after `ms`, whichever comes first. */
async function within(work: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([work, new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}

/** The catalog's services with an id and a name; undefined when the answer is no catalog. */
function parseCatalog(body: string): CatalogService[] | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  const services = (parsed as { services?: unknown } | null)?.services;
  if (!Array.isArray(services)) return undefined;
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  // A name goes into routes, answers and terminals: one that holds a control or invisible
  // character (an escape sequence, a bidi override) is left out, not shown; descriptions are shown escaped.
  const named = (entry: Record<string, unknown>) => text(entry.name) !== "" && printable(text(entry.name)) === entry.name;
  const described = (entry: Record<string, unknown>) => printable(text(entry.description), { oneLine: true });
  return (services as Array<Record<string, unknown>>)
    .filter((service) => service !== null && typeof service === "object" && text(service.id) !== "" && named(service))
    .map((service) => ({
      id: text(service.id),
      name: text(service.name),
      description: described(service),
      plans: (Array.isArray(service.plans) ? (service.plans as Array<Record<string, unknown>>) : [])
        .filter((plan) => plan !== null && typeof plan === "object" && named(plan))
        .map((plan) => ({ id: text(plan.id), name: text(plan.name), description: described(plan) })),
    }));
}
