/**
 * The provider's configuration, read from the environment. A bad or missing value stops the
 * start with one line per problem saying which variable and what to set.
 */
import { z } from "zod";

const ENV = z.object({
  PORT: z.coerce
    .number({ error: "must be a port number" })
    .int("must be a whole number")
    .min(0, "must be between 0 and 65535")
    .max(65535, "must be between 0 and 65535")
    .default(8080),
  HOST: z.string().min(1).optional(),
  PROVIDER_USERNAME: z.string().min(1).default("redis"),
  PROVIDER_PASSWORD: z
    .string({ error: "is required: the password the platform sends (the `password` of the service manifest)" })
    .min(1, "is empty: set the password the platform sends (the `password` of the service manifest)"),
  REDIS_URL: z
    .string()
    .regex(/^redis:\/\//, "must look like redis://[user:password@]host:port")
    .optional(),
  DATA_DIR: z.string().min(1).default("./.redis-data"),
  REDIS_SERVER: z.string().min(1).default("redis-server"),
  DEDICATED_MAXMEMORY: z
    .string()
    .regex(/^\d+(b|k|kb|m|mb|g|gb)?$/i, "must be a Redis memory size such as 64mb or 1gb")
    .default("64mb"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  REDIS_SENTINELS: z
    .string()
    .regex(/^[^\s,:]+:\d+(,[^\s,:]+:\d+)*$/, "must be a comma-separated host:port list, such as 10.0.0.1:26379,10.0.0.2:26379")
    .transform((list) => list.split(",").map(hostAndPort))
    .optional(),
  REDIS_SENTINEL_NAME: z.string().min(1).optional(),
}).refine((env) => (env.REDIS_SENTINELS === undefined) === (env.REDIS_SENTINEL_NAME === undefined), {
  path: ["REDIS_SENTINEL_NAME"],
  error: "and REDIS_SENTINELS go together: set both for Sentinel mode, or neither",
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
  /** The Redis the provider administers and keeps its registry in; absent: an embedded server. */
  redisUrl?: string;
  /** Data of the embedded server (`<dataDir>/embedded`) and dedicated instances (`<dataDir>/instances`). */
  dataDir: string;
  /** The `redis-server` executable, for the embedded server and dedicated instances. */
  redisServer: string;
  dedicatedMaxmemory: string;
  logLevel: z.infer<typeof ENV>["LOG_LEVEL"];
  /** Sentinel mode: the registry lives on the primary these sentinels name, not in the administered server. */
  registrySentinel?: { name: string; sentinels: Array<{ host: string; port: number }> };
}

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
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
    dataDir: values.DATA_DIR,
    redisServer: values.REDIS_SERVER,
    dedicatedMaxmemory: values.DEDICATED_MAXMEMORY,
    logLevel: values.LOG_LEVEL,
    registrySentinel:
      values.REDIS_SENTINEL_NAME && values.REDIS_SENTINELS ? { name: values.REDIS_SENTINEL_NAME, sentinels: values.REDIS_SENTINELS } : undefined,
  };
}
