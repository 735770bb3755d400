/**
 * Options of `createProvider`, their defaults, and the checks that refuse a bad configuration
 * at start-up (a provider that starts without auth, or with a typo in its options, is worse
 * than one that does not start).
 */
import { pino, type Logger } from "pino";
import type { HealthCheck } from "./http/healthcheck.js";
import type { RegistryOptions } from "./lifecycle/options.js";
import { ConfigurationError } from "./errors.js";
import { VARIANTS, type Variant } from "./contract.js";
import { resolveOsbOptions, type OsbOptions, type ResolvedOsbOptions } from "./osb/options.js";

/**
 * HTTP Basic credentials the platform must present.
 * The platform sends the service manifest's `username`, or the service id when that is empty,
 * so list every name it may use. Every name shares the one password.
 */
export interface AuthOptions {
  usernames: string[];
  password: string;
  /** Realm named in the `WWW-Authenticate` challenge. Default `"provider"`. */
  realm?: string;
}

export interface ProviderOptions {
  /** Required: the credentials, or `false` to turn auth off on purpose (tests, a trusted network). */
  auth: AuthOptions | false;
  /**
   * Required: the instance registry (state, locking, background steps) with the store it keeps
   * state in, or `false` to call the handlers directly and keep state yourself. Production and
   * several replicas need a `RedisStore`; a `MemoryStore` forgets everything on restart.
   */
  registry: RegistryOptions | false;
  /** Route generations to serve. Default: all of `["A", "B", "current"]` (their paths do not collide). */
  variants?: Variant[];
  /** Where the one-line-per-request log goes. Default: `pino()` to stdout. */
  logger?: Logger;
  /** Header carrying the platform's request id (read, echoed, generated when absent). Default `"X-Request-ID"`. */
  requestIdHeader?: string;
  /** Time a handler may take before the call answers 500 and `ctx.signal` aborts. Default 60 000 ms. */
  handlerTimeoutMs?: number;
  /** Largest request body accepted, in bytes; larger answers 413. Default 1 MiB. */
  bodyLimitBytes?: number;
  /**
   * Your components for `GET /healthcheck?check=all`, by name (`{ "database": () => db.ping() }`):
   * a check resolves when the component works and rejects when it does not. The registry's
   * store is checked as `state store` without being listed here.
   */
  healthChecks?: Record<string, HealthCheck>;
  /** Longest wait for one health check before it counts as failed. Default 5 000 ms. */
  healthCheckTimeoutMs?: number;
  /**
   * Serve `GET /metrics` on the API, behind its auth. Default true; false when you serve
   * `provider.serveMetrics` elsewhere (a port of its own).
   */
  metricsRoute?: boolean;
  /** Most fields a form body may have (repeated keys count each time); more answers 413. Default 1000. */
  formFieldLimit?: number;
  /** Serve the Open Service Broker API v2.17 too, under `/v2`, from the same handlers (docs/guide/osb.md). Default: off. */
  osb?: OsbOptions;
}

export interface ResolvedOptions {
  auth: Required<AuthOptions> | false;
  registry: RegistryOptions | false;
  variants: ReadonlySet<Variant>;
  logger: Logger;
  /** Lower-cased, as Node keys `req.headers`. */
  requestIdHeader: string;
  handlerTimeoutMs: number;
  bodyLimitBytes: number;
  healthChecks: ReadonlyArray<readonly [name: string, check: HealthCheck]>;
  healthCheckTimeoutMs: number;
  metricsRoute: boolean;
  formFieldLimit: number;
  osb: ResolvedOsbOptions | undefined;
}

export const DEFAULTS = {
  realm: "provider",
  requestIdHeader: "X-Request-ID",
  handlerTimeoutMs: 60_000,
  bodyLimitBytes: 1024 * 1024,
  healthCheckTimeoutMs: 5_000,
  formFieldLimit: 1000,
} as const;

function resolveAuth(auth: ProviderOptions["auth"] | undefined): ResolvedOptions["auth"] {
  if (auth === false) return false;
  const fix =
    'Pass auth: { usernames: ["<manifest username>", "<service id>"], password: "<manifest password>" }, ' +
    "or auth: false to run without authentication on purpose.";
  if (auth === undefined || auth === null || typeof auth !== "object") {
    throw new ConfigurationError(`createProvider: no credentials configured. ${fix}`);
  }
  const usernames = Array.isArray(auth.usernames) ? auth.usernames : [];
  if (usernames.length === 0 || usernames.some((name) => typeof name !== "string" || name === "")) {
    throw new ConfigurationError(`createProvider: auth.usernames must list at least one non-empty user name. ${fix}`);
  }
  if (usernames.some((name) => name.includes(":"))) {
    throw new ConfigurationError("createProvider: a Basic auth user name cannot contain ':'. Fix auth.usernames.");
  }
  if (typeof auth.password !== "string" || auth.password === "") {
    throw new ConfigurationError(`createProvider: auth.password is empty or missing. ${fix}`);
  }
  return { usernames: [...usernames], password: auth.password, realm: auth.realm ?? DEFAULTS.realm };
}

function resolveRegistry(registry: ProviderOptions["registry"] | undefined): ResolvedOptions["registry"] {
  if (registry === false) return false;
  const fix =
    "Pass registry: { store: new RedisStore({ url: \"redis://...\" }) } in production and with several replicas " +
    "(instances and bindings survive restarts), registry: { store: new MemoryStore() } for tests and single-process " +
    "trials (forgotten on restart: calls on instances made before it answer 404), " +
    "or registry: false to call the handlers directly and keep state yourself.";
  if (registry === undefined || registry === null || typeof registry !== "object") {
    throw new ConfigurationError(`createProvider: no instance registry configured. ${fix}`);
  }
  if (typeof registry.store?.withLock !== "function") {
    throw new ConfigurationError(`createProvider: registry.store is missing: nothing is picked for you. ${fix}`);
  }
  return registry;
}

function positiveInteger(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigurationError(`createProvider: ${name} must be a positive whole number, got ${String(value)}.`);
  }
  return value;
}

function resolveHealthChecks(checks: ProviderOptions["healthChecks"]): ResolvedOptions["healthChecks"] {
  const entries = Object.entries(checks ?? {});
  for (const [name, check] of entries) {
    if (typeof check !== "function") {
      throw new ConfigurationError(`createProvider: healthChecks["${name}"] must be an async function that rejects when "${name}" fails.`);
    }
    if (name === "" || /[\r\n:]/.test(name)) {
      throw new ConfigurationError(`createProvider: health check name ${JSON.stringify(name)} must be non-empty, on one line and without ':'.`);
    }
  }
  return entries;
}

function resolveVariants(variants: Variant[] | undefined): ReadonlySet<Variant> {
  if (variants === undefined) return new Set(VARIANTS);
  const unknown = variants.filter((variant) => !VARIANTS.includes(variant));
  if (unknown.length > 0 || variants.length === 0) {
    throw new ConfigurationError(
      `createProvider: variants must be a non-empty list of ${VARIANTS.map((v) => `"${v}"`).join(", ")}; ` +
        `got ${JSON.stringify(variants)}.`,
    );
  }
  return new Set(variants);
}

export function resolveOptions(options: ProviderOptions | undefined): ResolvedOptions {
  const given: Partial<ProviderOptions> = options ?? {};
  const requestIdHeader = given.requestIdHeader ?? DEFAULTS.requestIdHeader;
  if (!/^[A-Za-z0-9-]+$/.test(requestIdHeader)) {
    throw new ConfigurationError(`createProvider: requestIdHeader "${requestIdHeader}" is not a valid header name.`);
  }
  // Auth first: a provider without credentials is told about them before anything else.
  const auth = resolveAuth(given.auth);
  const registry = resolveRegistry(given.registry);
  return {
    auth,
    registry,
    variants: resolveVariants(given.variants),
    logger: given.logger ?? pino(),
    requestIdHeader: requestIdHeader.toLowerCase(),
    handlerTimeoutMs: positiveInteger(given.handlerTimeoutMs, DEFAULTS.handlerTimeoutMs, "handlerTimeoutMs"),
    bodyLimitBytes: positiveInteger(given.bodyLimitBytes, DEFAULTS.bodyLimitBytes, "bodyLimitBytes"),
    healthChecks: resolveHealthChecks(given.healthChecks),
    healthCheckTimeoutMs: positiveInteger(given.healthCheckTimeoutMs, DEFAULTS.healthCheckTimeoutMs, "healthCheckTimeoutMs"),
    metricsRoute: given.metricsRoute ?? true,
    formFieldLimit: positiveInteger(given.formFieldLimit, DEFAULTS.formFieldLimit, "formFieldLimit"),
    osb: resolveOsbOptions(given.osb, registry !== false),
  };
}
