/**
 * The Redis provider as a program: `PROVIDER_PASSWORD=... npm start`.
 * Configuration comes from the environment (see config.ts and the README section "example").
 */
import { pino } from "pino";
import { ConfigError, readConfig, type Config } from "./config.js";
import { RedisServerNotFoundError } from "../../src/redis/server.js";
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

const logger = pino({ level: config.logLevel });
const provider = await startRedisProvider(config, { logger }).catch((error: unknown) => {
  if (error instanceof RedisServerNotFoundError) fail(error.message);
  logger.fatal({ err: error }, "the provider could not start");
  process.exit(1);
});

// Dedicated instances keep running for their apps; the embedded server stops with us.
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    logger.info({ signal }, "stopping: finishing the calls in progress");
    provider.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, "stopping failed");
        process.exit(1);
      },
    );
  });
}
