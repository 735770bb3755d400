/**
 * The Redis example provider (examples/redis) as its users run it, against the redis-server at
 * BENCH_REDIS_URL (started by the harness): administered Redis and registry on that server, JSON
 * logs to stdout (which the harness points at a file). Before the harness measures, a `shared`
 * instance is created and ready.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { readConfig } from "../../examples/redis/config.js";
import { startRedisProvider } from "../../examples/redis/redis-provider.js";
import { CREDENTIALS } from "../calls.js";
import { createInstance } from "./instance.js";
import { announce } from "./listen.js";

const url = process.env.BENCH_REDIS_URL;
if (url === undefined) throw new Error("The example's bench server needs BENCH_REDIS_URL (bench/redis.ts sets it).");
const dataDir = mkdtempSync(join(tmpdir(), "provider-kit-bench-example-"));

const config = readConfig(
  {
    PORT: "0",
    HOST: "127.0.0.1",
    PROVIDER_USERNAME: CREDENTIALS.username,
    PROVIDER_PASSWORD: CREDENTIALS.password,
    REDIS_URL: url,
    REGISTRY_REDIS_URL: url,
    DATA_DIR: dataDir,
    LOG_FORMAT: "json",
  },
  false,
);
const running = await startRedisProvider(config, { logger: pino({ level: config.logLevel }) });

announce(Number(new URL(running.url).port), {
  prepare: (baseUrl) => createInstance(baseUrl, { plan: "shared" }),
  close: async () => {
    await running.close();
    rmSync(dataDir, { recursive: true, force: true });
  },
});
