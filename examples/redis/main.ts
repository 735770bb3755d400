#!/usr/bin/env node
/**
 * The Redis provider as a program: `PROVIDER_PASSWORD=... npm start`, or compiled,
 * `node examples/redis/dist/main.js` (after the root's `npm run build`; the Dockerfile).
 * Configuration comes from the environment (see config.ts and the README section "example").
 */
import { pino, type Logger } from "pino";
import { ConfigError, readConfig, type Config } from "./config.js";
import { DataDirLockedError, onParentExit } from "@provider-kit/platform/redis-process";
import { RedisServerNotFoundError } from "@provider-kit/platform/redis-server";
import { startRedisProvider } from "./redis-provider.js";

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

let config: Config;
try {
  config = readConfig();
} catch (error) {
  if (error instanceof ConfigError) fail(error.message);
  throw error;
}

/**
 * JSON lines for machines; with LOG_FORMAT=pretty (the default on a terminal), lines for people,
 * through pino-pretty: a checkout has it, a project that installs provider-kit may not.
 */
async function createLogger({ logLevel, logFormat }: Config): Promise<Logger> {
  if (logFormat === "json") return pino({ level: logLevel });
  const pretty = await import("pino-pretty").catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code !== "ERR_MODULE_NOT_FOUND") throw error;
    process.stderr.write("Readable log lines need pino-pretty (npm install pino-pretty): writing JSON lines.\n");
  });
  if (pretty === undefined) return pino({ level: logLevel });
  return pino({ level: logLevel }, pretty.PinoPretty({ sync: true, colorize: process.stdout.isTTY === true, ignore: "pid,hostname" }));
}

/** Start-up failures a user fixes without a stack trace: one plain line. */
function plainStartError(error: unknown): string | undefined {
  if (error instanceof RedisServerNotFoundError || error instanceof DataDirLockedError) return error.message;
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    const { address, port } = error as NodeJS.ErrnoException & { address?: string; port?: number };
    const where = address === undefined || address === "::" || address === "0.0.0.0" ? "every address" : address;
    return `Port ${port} on ${where} is already in use: stop what listens there, or set PORT (or METRICS_PORT) to a free port.`;
  }
  return undefined;
}

const logger = await createLogger(config);
// Not awaited here: the stop signals are handled from now on, so one that comes while the provider
// starts (after its "listening" line, say) stops it once it has started, instead of killing it.
const started = startRedisProvider(config, { logger }).catch((error: unknown) => {
  const plain = plainStartError(error);
  if (plain !== undefined) fail(plain);
  logger.fatal({ err: error }, "the provider could not start");
  process.exit(1);
});

// Dedicated instances keep running for their apps; the embedded servers stop with us.
function stop(why: Record<string, unknown>): void {
  logger.info(why, "stopping: finishing the calls in progress");
  started.then((provider) => provider.close()).then(
    () => {
      logger.info("Redis provider stopped");
      process.exit(0);
    },
    (error: unknown) => {
      logger.error({ err: error }, "stopping failed");
      process.exit(1);
    },
  );
}

let stopping = false;
const stopOnce = (why: Record<string, unknown>) => {
  if (stopping) return;
  stopping = true;
  stop(why);
};
// `on`, not `once`: Ctrl-C on `npm start` signals us twice (the terminal's, then npm's forwarded
// copy), and a second signal with no listener would kill us in the middle of stopping.
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => stopOnce({ signal }));
// A parent killed without passing its signal on (npm, a shell, a supervisor) must not leave us orphaned.
onParentExit(() => stopOnce({ reason: "the parent process exited" }));
