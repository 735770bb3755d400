/**
 * Real processes for end-to-end runs: the Redis example (`examples/redis/main.ts`, what `npm
 * start` runs) and `provider-kit platform` (embedded redis-server under its data directory),
 * on free loopback ports. Used by the end-to-end tests, the console's browser test and the
 * console's screenshot script.
 */
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { killServersUnder, slowRedisServer, tempDir } from "../../../../examples/redis/test/support.js";
import { REDIS_SERVER } from "../../../../test/support/redis-server.js";
import { startLongRunning, type LongRunning } from "../../../provider-kit/test/template/processes.js";
import { ADMIN, Api, manifest } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../../../..");
export const PROVIDER_PASSWORD = "e2e-provider-secret";
export const START_MS = 60_000;

export interface ExampleProvider {
  url: string;
  process: LongRunning;
  /** The manifest that registers it as the service `redis`. */
  manifest: string;
  stop(): Promise<void>;
}

/**
 * `slowStartSeconds`: each redis-server it starts waits that long first, so a dedicated instance is
 * seen pending. `clusterName`: the cluster it serves, as one endpoint of a multi-cluster service.
 */
export async function startRedisExample(options: { slowStartSeconds?: number; clusterName?: string } = {}): Promise<ExampleProvider> {
  const dir = await tempDir("e2e-provider");
  const redisServer = options.slowStartSeconds ? await slowRedisServer(dir, options.slowStartSeconds) : REDIS_SERVER;
  const process = startLongRunning(globalThis.process.execPath, ["--conditions=source", "--import", "tsx", "examples/redis/main.ts"], {
    cwd: ROOT,
    env: { PORT: "0", HOST: "127.0.0.1", PROVIDER_PASSWORD, DATA_DIR: dir, REDIS_SERVER: redisServer, LOG_LEVEL: "info", CLUSTER_NAME: options.clusterName ?? "" },
  });
  const stop = async () => {
    await process.stop();
    await killServersUnder(dir);
  };
  let url: string;
  try {
    url = await process.waitForUrl(/Redis provider listening/, START_MS);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, process, manifest: manifest("redis", url, { username: "redis", password: PROVIDER_PASSWORD }), stop };
}

export interface PlatformProcess {
  url: string;
  /** Logged in as the admin. */
  api: Api;
  process: LongRunning;
  stop(): Promise<void>;
}

/**
 * A platform process keeping its state under `dataDir` (the same directory again: a restart), on
 * `port` (default: any free one, read from what it prints), with `flags` added (`--seed`...).
 */
export async function startPlatformProcess(dataDir: string, port = 0, flags: string[] = []): Promise<PlatformProcess> {
  const process = startLongRunning(
    globalThis.process.execPath,
    // --allow-run: the suites run commands through the app's environment.
    ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "platform", "--port", String(port), "--data-dir", dataDir, "--allow-run", ...flags],
    { cwd: ROOT, env: { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password, REDIS_SERVER } },
  );
  try {
    const url = await process.waitForUrl(/listening on http:/, START_MS);
    return { url, api: await new Api(url).login(ADMIN.email, ADMIN.password), process, stop: () => process.stop() };
  } catch (error) {
    await process.stop();
    throw error;
  }
}

/** Removes a platform's data directory once its process is stopped. */
export const removeDir = (dir: string) => rm(dir, { recursive: true, force: true });
