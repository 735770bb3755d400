/**
 * The Redis example and the local platform as any package's tests run them: the example
 * in-process (`startTestProvider`) or as a process (`startRedisExample`), the platform as a
 * process (`startPlatformProcess`), and an app's side of a binding.
 */
import { rm } from "node:fs/promises";
import { resolve } from "node:path";
import { pino } from "pino";
import { createClient } from "@redis/client";
import type { Config } from "../../examples/redis/config.js";
import { startRedisProvider, type RunningProvider, type StartOptions } from "../../examples/redis/redis-provider.js";
import { killServersUnder, slowRedisServer, tempDir } from "./data-dirs.js";
import { ADMIN, Api } from "./platform-api.js";
import { startLongRunning, type LongRunning } from "./processes.js";
import { REDIS_SERVER } from "./redis-server.js";

/** The password of the example started in-process. */
export const PASSWORD = "platform-secret";

export function testConfig(overrides: Partial<Config> & Pick<Config, "dataDir">): Config {
  return {
    port: 0,
    host: "127.0.0.1",
    username: "redis",
    password: PASSWORD,
    redisServer: REDIS_SERVER,
    dedicatedMaxmemory: "64mb",
    sharedMaxmemory: "64mb",
    sharedMaxmemoryPolicy: "noeviction",
    aclSaveIntervalMs: 1_000,
    logLevel: "silent",
    logFormat: "json",
    ...overrides,
  };
}

/** Short leases and polls, so a takeover after a restart happens within a test's patience. */
export function startTestProvider(config: Config, registry: StartOptions["registry"] = {}): Promise<RunningProvider> {
  return startRedisProvider(config, {
    logger: pino({ level: "silent" }),
    registry: { leaseTtlMs: 1_000, pollIntervalMs: 200, stepRetryDelayMs: 200, ...registry },
  });
}

/** An app connected with the env a bind returned, by its REDIS_URL as an app would. */
export async function appClient(env: Record<string, string>) {
  // node-redis gives a connection 5 s; tests connecting dozens of apps at once on a loaded
  // runner saw every try time out for a minute (the server was answering).
  const client = createClient({ url: env.REDIS_URL, socket: { reconnectStrategy: false, connectTimeout: 30_000 } });
  client.on("error", () => {});
  await client.connect();
  return client;
}

export type AppClient = Awaited<ReturnType<typeof appClient>>;

/** The apps a test connects, all closed at once by `closeAll` (in `afterAll`). */
export function appClients() {
  const open: AppClient[] = [];
  return {
    async connect(env: Record<string, string>): Promise<AppClient> {
      const client = await appClient(env);
      open.push(client);
      return client;
    },
    closeAll() {
      for (const client of open) if (client.isOpen) client.destroy();
    },
  };
}

const ROOT = resolve(import.meta.dirname, "../..");
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
  return { url, process, manifest: exampleManifest(url), stop };
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

/** The manifest registering the example at `url` as the service `redis` (JSON: YAML the platform reads). */
function exampleManifest(url: string): string {
  return JSON.stringify({ id: "redis", username: "redis", password: PROVIDER_PASSWORD, endpoint: { production: url } });
}

/** Removes a platform's data directory once its process is stopped. */
export const removeDir = (dir: string) => rm(dir, { recursive: true, force: true });
