/**
 * The provider's configuration, read from the environment. A bad or missing value stops the
 * start with one line per problem saying which variable and what to set.
 */
import { z } from "zod";

const port = () =>
  z.coerce
    .number({ error: "must be a port number" })
    .int("must be a whole number")
    .min(0, "must be between 0 and 65535")
    .max(65535, "must be between 0 and 65535");
const redisUrl = () => z.string().regex(/^redis:\/\//, "must look like redis://[user:password@]host:port");
const memorySize = () => z.string().regex(/^\d+(b|k|kb|m|mb|g|gb)?$/i, "must be a Redis memory size such as 64mb or 1gb");

/** Redis's `maxmemory-policy` values. */
const EVICTION_POLICIES = [
  "noeviction",
  "allkeys-lru",
  "allkeys-lfu",
  "allkeys-random",
  "volatile-lru",
  "volatile-lfu",
  "volatile-random",
  "volatile-ttl",
] as const;

const ENV = z.object({
  PORT: port().default(8080),
  HOST: z.string().min(1).optional(),
  PROVIDER_USERNAME: z.string().min(1).default("redis"),
  PROVIDER_PASSWORD: z
    .string({ error: "is required: the password the platform sends (the `password` of the service manifest)" })
    .min(1, "is empty: set the password the platform sends (the `password` of the service manifest)"),
  REDIS_URL: redisUrl().optional(),
  REGISTRY_REDIS_URL: redisUrl().optional(),
  SHARED_MAXMEMORY: memorySize().default("256mb"),
  SHARED_MAXMEMORY_POLICY: z.enum(EVICTION_POLICIES, { error: `must be one of ${EVICTION_POLICIES.join(", ")}` }).default("noeviction"),
  DATA_DIR: z.string().min(1).default("./.redis-data"),
  REDIS_SERVER: z.string().min(1).default("redis-server"),
  DEDICATED_MAXMEMORY: memorySize().default("64mb"),
  METRICS_PORT: port().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  LOG_FORMAT: z.enum(["json", "pretty"], { error: "must be json or pretty" }).optional(),
  REDIS_SENTINELS: z
    .string()
    .regex(/^[^\s,:]+:\d+(,[^\s,:]+:\d+)*$/, "must be a comma-separated host:port list, such as 10.0.0.1:26379,10.0.0.2:26379")
    .transform((list) => list.split(",").map(hostAndPort))
    .optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).optional(),
  CLUSTER_NAME: z.string().regex(/^[a-z][a-z0-9-]{0,39}$/, "must be a cluster name: lower-case letters, digits and dashes").optional(),
  ACL_SAVE_INTERVAL_MS: z.coerce.number({ error: "must be a number of milliseconds" }).int("must be a whole number").min(0, "must be 0 or more").default(1_000),
}).refine((env) => (env.REDIS_SENTINELS === undefined) === (env.REDIS_SENTINEL_NAME === undefined), {
  path: ["REDIS_SENTINEL_NAME"],
  error: "and REDIS_SENTINELS go together: set both for Sentinel mode, or neither",
}).refine((env) => env.REDIS_SENTINELS === undefined || env.REGISTRY_REDIS_URL === undefined, {
  path: ["REGISTRY_REDIS_URL"],
  error: "and REDIS_SENTINELS both place the registry: set one of them",
});

function hostAndPort(node: string): { host: string; port: number } {
  const colon = node.lastIndexOf(":");
  return { host: node.slice(0, colon), port: Number(node.slice(colon + 1)) };
}

export interface Config {
  /** HTTP port (0: any free port) and address the provider listens on (absent: every address). */
  port: number;
  host?: string;
  /** Basic auth the platform presents: the manifest's `username` (or service id) and `password`. */
  username: string;
  password: string;
  /** The Redis the provider administers (shared instances live there); absent: an embedded server. */
  redisUrl?: string;
  /** The Redis of the provider's registry; absent: `redisUrl` when set (with a warning), else an embedded server. */
  registryRedisUrl?: string;
  /** `maxmemory` and `maxmemory-policy` of the embedded administered server (all shared instances together). */
  sharedMaxmemory: string;
  sharedMaxmemoryPolicy: (typeof EVICTION_POLICIES)[number];
  /** Data of the embedded server (`<dataDir>/embedded`) and dedicated instances (`<dataDir>/instances`). */
  dataDir: string;
  /** The `redis-server` executable, for the embedded server and dedicated instances. */
  redisServer: string;
  dedicatedMaxmemory: string;
  /** Serve `GET /metrics` on this port, without auth, instead of on the API behind its auth. */
  metricsPort?: number;
  logLevel: z.infer<typeof ENV>["LOG_LEVEL"];
  /** `pretty`: readable lines for people; `json`: one JSON object per line, for machines. */
  logFormat: "json" | "pretty";
  /**
   * Least time between two background saves of the administered server's ACL file (sooner once
   * 500 changes wait). Changes are durable before (the registry journals them).
   */
  aclSaveIntervalMs: number;
  /**
   * The cluster this provider serves, as one endpoint (`endpoint.<cluster>`) of a multi-cluster
   * service: instances are created only for pools of that cluster. Absent: any call is served.
   */
  clusterName?: string;
  /** Sentinel mode: the registry lives on the primary these sentinels name, not in the administered server. */
  registrySentinel?: { name: string; sentinels: Array<{ host: string; port: number }> };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** LOG_FORMAT defaults to `pretty` when a person watches the output (a terminal), `json` otherwise. */
export function readConfig(env: NodeJS.ProcessEnv = process.env, stdoutIsTerminal = process.stdout.isTTY === true): Config {
  // An empty variable counts as unset, as shells and .env files often leave them.
  const given = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ""));
  const parsed = ENV.safeParse(given);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  ${issue.path.join(".")} ${issue.message}`);
    throw new ConfigError(`The provider cannot start; fix these environment variables:\n${problems.join("\n")}`);
  }
  const values = parsed.data;
  return {
    port: values.PORT,
    host: values.HOST,
    username: values.PROVIDER_USERNAME,
    password: values.PROVIDER_PASSWORD,
    redisUrl: values.REDIS_URL,
    registryRedisUrl: values.REGISTRY_REDIS_URL,
    sharedMaxmemory: values.SHARED_MAXMEMORY,
    sharedMaxmemoryPolicy: values.SHARED_MAXMEMORY_POLICY,
    dataDir: values.DATA_DIR,
    redisServer: values.REDIS_SERVER,
    dedicatedMaxmemory: values.DEDICATED_MAXMEMORY,
    metricsPort: values.METRICS_PORT,
    aclSaveIntervalMs: values.ACL_SAVE_INTERVAL_MS,
    clusterName: values.CLUSTER_NAME,
    logLevel: values.LOG_LEVEL,
    logFormat: values.LOG_FORMAT ?? (stdoutIsTerminal ? "pretty" : "json"),
    registrySentinel:
      values.REDIS_SENTINEL_NAME && values.REDIS_SENTINELS ? { name: values.REDIS_SENTINEL_NAME, sentinels: values.REDIS_SENTINELS } : undefined,
  };
}
