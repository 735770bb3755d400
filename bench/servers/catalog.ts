/**
 * The servers the harness can run. Each runs in its own child process from `entry`;
 * `env` selects a variant of the same entry (the provider's diagnostic variants switch one
 * feature off at a time, to locate where its time goes).
 */
import { fileURLToPath } from "node:url";

export type ServerRole = "provider" | "express-bare" | "express-handwritten" | "node-http" | "example";

export interface ServerSpec {
  id: string;
  role: ServerRole;
  /** One line for the table's legend. */
  description: string;
  entry: string;
  env: Record<string, string>;
  /** Run when no --servers list is given. */
  byDefault: boolean;
  /** Needs a redis-server: the harness starts one for it alone and passes it as BENCH_REDIS_URL. */
  redis?: boolean;
}

const entry = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Environment the provider entry reads (see servers/provider.ts). */
export interface ProviderVariantEnv {
  BENCH_PROVIDER_REGISTRY?: "off" | "memory" | "redis";
  BENCH_PROVIDER_LOG?: "on" | "off" | "buffered";
  BENCH_PROVIDER_AUTH?: "on" | "off";
  BENCH_PROVIDER_SERVING?: "direct" | "express";
}

function provider(id: string, description: string, env: ProviderVariantEnv, byDefault: boolean): ServerSpec {
  return { id, role: "provider", description, entry: entry("./provider.ts"), env: { ...env }, byDefault, redis: env.BENCH_PROVIDER_REGISTRY === "redis" };
}

const providerRedisStore = provider(
  "provider-redis-store",
  "same, with the registry in a RedisStore on a real redis-server the harness starts (unpinned; its CPU counted with the server's)",
  { BENCH_PROVIDER_REGISTRY: "redis" },
  true,
);

export const SERVERS: readonly ServerSpec[] = [
  provider(
    "provider",
    "createProvider served as provider.listen() serves it (its routes straight from node:http), registry: false, trivial handlers; auth, parsing, validation, default logging (stdout to a file)",
    { BENCH_PROVIDER_REGISTRY: "off" },
    true,
  ),
  provider(
    "provider-registry",
    "same, with an in-memory registry (instance created before the run)",
    { BENCH_PROVIDER_REGISTRY: "memory" },
    true,
  ),
  providerRedisStore,
  {
    id: "express-bare",
    role: "express-bare",
    description: "Express 5 routes giving the same answers; no auth, no parsing",
    entry: entry("./express-bare.ts"),
    env: {},
    byDefault: true,
  },
  {
    id: "express-handwritten",
    role: "express-handwritten",
    description: "Express 5 + express-basic-auth + body-parser urlencoded, checks by hand, no logging",
    entry: entry("./express-handwritten.ts"),
    env: {},
    byDefault: true,
  },
  {
    id: "node-http",
    role: "node-http",
    description: "raw node:http server giving the same answers",
    entry: entry("./node-http.ts"),
    env: {},
    byDefault: true,
  },
  // Diagnostics, run on request (--servers): the provider with one feature switched off.
  provider("provider-no-log", "provider, registry: false, logging off (level silent)", { BENCH_PROVIDER_REGISTRY: "off", BENCH_PROVIDER_LOG: "off" }, false),
  provider(
    "provider-buffered-log",
    "provider, registry: false, pino to stdout buffered (sync: false, minLength 4096)",
    { BENCH_PROVIDER_REGISTRY: "off", BENCH_PROVIDER_LOG: "buffered" },
    false,
  ),
  provider("provider-no-auth", "provider, registry: false, auth off", { BENCH_PROVIDER_REGISTRY: "off", BENCH_PROVIDER_AUTH: "off" }, false),
  provider(
    "provider-express",
    "provider, registry: false, served through its Express app (http.createServer(provider), as when mounted)",
    { BENCH_PROVIDER_REGISTRY: "off", BENCH_PROVIDER_SERVING: "express" },
    false,
  ),
];

/**
 * The servers of `npm run bench:redis` (bench/redis.ts), each on a redis-server of its own that
 * the harness starts and passes as BENCH_REDIS_URL.
 */
export const REDIS_SERVERS: readonly ServerSpec[] = [
  providerRedisStore,
  {
    id: "example",
    role: "example",
    description: "the Redis example provider (examples/redis), a shared instance, administered Redis and registry on a real redis-server",
    entry: entry("./example-redis.ts"),
    env: {},
    byDefault: true,
  },
];

export function selectServers(ids: string[] | undefined): ServerSpec[] {
  if (!ids) return SERVERS.filter((server) => server.byDefault);
  return ids.map((id) => {
    const server = SERVERS.find((candidate) => candidate.id === id);
    if (!server) throw new Error(`Unknown server "${id}". Known: ${SERVERS.map((s) => s.id).join(", ")}.`);
    return server;
  });
}
