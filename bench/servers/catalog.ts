/**
 * The servers the harness can run. Each runs in its own child process from `entry`;
 * `env` selects a variant of the same entry (the provider's registry).
 */
import { fileURLToPath } from "node:url";

export interface ServerSpec {
  id: string;
  /** One line for the table's legend. */
  description: string;
  entry: string;
  env: Record<string, string>;
  /** Writes its log to stdout, which the harness points at a file (the provider rows). */
  logs?: boolean;
  /** Needs a redis-server: the harness starts one for it alone and passes it as BENCH_REDIS_URL. */
  redis?: boolean;
}

const entry = (file: string) => fileURLToPath(new URL(file, import.meta.url));

/** Environment the provider entry reads (see servers/provider.ts). */
export interface ProviderVariantEnv {
  BENCH_PROVIDER_REGISTRY?: "off" | "memory" | "redis";
}

function provider(id: string, description: string, env: ProviderVariantEnv): ServerSpec {
  return { id, description, entry: entry("./provider.ts"), env: { ...env }, logs: true, redis: env.BENCH_PROVIDER_REGISTRY === "redis" };
}

const providerRedisStore = provider(
  "provider-redis-store",
  "same, with the registry in a RedisStore on a real redis-server the harness starts (unpinned; its CPU counted with the server's)",
  { BENCH_PROVIDER_REGISTRY: "redis" },
);

export const SERVERS: readonly ServerSpec[] = [
  provider(
    "provider",
    "createProvider served as provider.listen() serves it (http.createServer(provider)), registry: false, trivial handlers; auth, parsing, validation, default logging (stdout to a file)",
    { BENCH_PROVIDER_REGISTRY: "off" },
  ),
  provider(
    "provider-registry",
    "same, with an in-memory registry (instance created before the run)",
    { BENCH_PROVIDER_REGISTRY: "memory" },
  ),
  providerRedisStore,
  {
    id: "express-bare",
    description: "Express 5 routes giving the same answers; no auth, no parsing",
    entry: entry("./express-bare.ts"),
    env: {},
  },
  {
    id: "express-handwritten",
    description:
      "Express 5 + express-basic-auth + body-parser urlencoded, checks by hand; the provider's features: a request id, one pino line per call (stdout to a file), a prom-client counter and histogram, a Map registry",
    entry: entry("./express-handwritten.ts"),
    env: {},
    logs: true,
  },
  {
    id: "node-http",
    description: "raw node:http server giving the same answers",
    entry: entry("./node-http.ts"),
    env: {},
  },
];

/**
 * The servers of `npm run bench:redis` (bench/redis.ts), each on a redis-server of its own that
 * the harness starts and passes as BENCH_REDIS_URL.
 */
export const REDIS_SERVERS: readonly ServerSpec[] = [
  providerRedisStore,
  {
    id: "example",
    description: "the Redis example provider (examples/redis), a shared instance, administered Redis and registry on a real redis-server",
    entry: entry("./example-redis.ts"),
    env: {},
  },
];
