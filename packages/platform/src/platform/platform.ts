/**
 * Puts the local platform together: its store (the given Redis, an embedded redis-server under
 * the data directory, or memory), the admin user, the seed, and the HTTP server.
 */
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, type RequestListener } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { addressOfUrl, redisClient, type Address } from "@provider-kit/redis-store/connection";
import { lockDataDir } from "../redis/process.js";
import { lineSupervisionLog, startOnFreePort, superviseRedisServer, type SupervisedRedisServer } from "../redis/server.js";
import { platformConfig, type PlatformConfig } from "./domain/config.js";
import { createContext, type Context } from "./domain/context.js";
import type { ProviderCallOptions } from "./domain/provider-calls.js";
import { undoInterruptedBinds } from "./domain/binding.js";
import { ensureAdmin } from "./domain/users.js";
import { createPlatformApp } from "./http/server.js";
import { applySeed, readSeed, seedTopology } from "./seed.js";
import { MemoryPlatformStore } from "./store/memory.js";
import { RedisPlatformStore } from "./store/redis.js";
import type { PlatformStore } from "./store/store.js";

export interface PlatformOptions {
  port: number;
  host: string;
  admin: { email: string; password: string };
  /** Where state lives: in memory, in this Redis, or (default) an embedded redis-server under `dataDir`. */
  state: { kind: "memory" } | { kind: "redis"; url: string } | { kind: "embedded"; dataDir: string; redisServer?: string };
  seedFile?: string;
  /** How long a seeded start waits for a provider it must call (default PROVIDER_WAIT_MS). */
  providerWaitMs?: number;
  /** Serve `run` (it runs commands on this machine as this process's OS user), to the app's team members. */
  allowRun?: boolean;
  /** Let anyone sign up; by default only the admin creates users. */
  openSignup?: boolean;
  /** Host names to answer for beyond the listen address, localhost, 127.0.0.1 and [::1]. */
  allowedHosts?: string[];
  version: string;
  providerCalls?: ProviderCallOptions;
  /** Pools, clusters, platforms, default quota, API variant; absent parts: DEFAULT_CONFIG's (the seed adds pools and clusters). */
  config?: Partial<PlatformConfig>;
  /** The platform's terminal: reset tokens and what healers did. */
  say?: (line: string) => void;
  /** Failures of the platform itself. */
  report?: (error: unknown) => void;
}

export interface RunningPlatform {
  url: string;
  context: Context;
  close(): Promise<void>;
}

interface OpenStore {
  store: PlatformStore;
  stop(): Promise<void>;
}

async function openStore(state: PlatformOptions["state"], say: (line: string) => void): Promise<OpenStore> {
  if (state.kind === "memory") return { store: new MemoryPlatformStore(), stop: async () => {} };
  if (state.kind === "redis") return connect(addressOfUrl(state.url), async () => {});
  // Before anything in the directory is touched: a second platform must not stop the first one's server.
  const lock = await lockDataDir(state.dataDir, { kind: "platform", setting: "--data-dir" });
  const dir = join(lock.dir, "redis");
  let server: SupervisedRedisServer | undefined;
  try {
    // Restarted whenever it dies (a leftover of a run that crashed is stopped first: it has that
    // run's password); the store's client reconnects to the same port.
    const password = randomBytes(24).toString("hex");
    server = await startOnFreePort((port) =>
      superviseRedisServer({ dir, port, password, binary: state.redisServer ?? "redis-server" }, { log: lineSupervisionLog("embedded ", say) }),
    );
    const supervised = server;
    return await connect(supervised.address, async () => {
      await supervised.stop();
      await lock.release();
    });
  } catch (error) {
    // A first start that failed has stopped its server already.
    await server?.stop();
    await lock.release();
    throw error;
  }
}

async function connect(address: Address, stopServer: () => Promise<void>): Promise<OpenStore> {
  const client = redisClient(address, { reconnect: true });
  await client.connect();
  const store = new RedisPlatformStore(client);
  return {
    store,
    stop: async () => {
      await store.close();
      await stopServer();
    },
  };
}

export async function startPlatform(options: PlatformOptions): Promise<RunningPlatform> {
  // The seed's pools and clusters are part of the configuration: a wrong one fails the start at once.
  const seed = options.seedFile === undefined ? undefined : await readSeed(options.seedFile);
  const config = platformConfig(options.config ?? {}, seed ? seedTopology(seed) : { pools: [], clusters: [] });
  // Listen first: a busy port fails the start before the data directory's Redis is touched.
  // Until the store is open and the seed applied, a request is answered 503 (to retry), not left waiting.
  let app: RequestListener | undefined;
  const server = createServer((req, res) => {
    if (app) return void app(req, res);
    res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8", "Retry-After": "1" });
    res.end("The platform is starting (opening its store, applying its seed): try again in a moment.");
  });
  server.listen({ port: options.port, host: options.host });
  await once(server, "listening");
  const closeServer = async () => {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
  };
  let opened: OpenStore | undefined;
  let undone = Promise.resolve();
  try {
    opened = await openStore(options.state, options.say ?? (() => {}));
    const context = createContext(opened.store, config, { say: options.say, providerCalls: options.providerCalls });
    await ensureAdmin(context, options.admin.email, options.admin.password);
    // Undone in the background: a provider that is slow to unbind must not keep the platform silent.
    ({ undone } = await undoInterruptedBinds(context));
    if (seed) await applySeed(context, options.admin.email, seed, options.providerWaitMs);
    app = createPlatformApp(context, {
        version: options.version,
        runAllowed: options.allowRun === true,
        openSignup: options.openSignup === true,
        hosts: { listenHost: options.host, port: (server.address() as AddressInfo).port, allowedHosts: options.allowedHosts ?? [] },
        report: options.report ?? (() => {}),
      });
    const { port } = server.address() as AddressInfo;
    // Listening on every interface, the platform is reached (and answers) as loopback here.
    const local = options.host === "0.0.0.0" ? "127.0.0.1" : options.host === "::" ? "::1" : options.host;
    const host = local.includes(":") ? `[${local}]` : local;
    const stop = opened.stop;
    let closing: Promise<void> | undefined;
    return {
      url: `http://${host}:${port}`,
      context,
      close: () =>
        (closing ??= (async () => {
          await closeServer();
          await undone;
          await stop();
        })()),
    };
  } catch (error) {
    await closeServer();
    await undone;
    await opened?.stop();
    throw error;
  }
}
