/**
 * Puts the Redis provider together: the Redis server it administers (the given REDIS_URL or an
 * embedded one), the registry in that server, both plans, and the HTTP server.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { createProvider, RedisStore, type RedisStoreOptions, type RegistryOptions, type Store } from "../../src/index.js";
import { generatePassword, hasAclFile } from "./acl.js";
import type { Config } from "./config.js";
import { redisClient, type Address, type RedisClient } from "../../src/redis/connection.js";
import { dedicatedPlan } from "./dedicated.js";
import { redisHandlers } from "./handlers.js";
import { ensureRedisServer, freePort, stopRedisServer } from "../../src/redis/server.js";
import { sharedPlan } from "./shared.js";

/**
 * Registry keys start with `_`, which no instance name can (see NAME_PATTERN), so no instance's
 * key prefix `<name>:`, and so no app's ACL key pattern, ever covers them.
 */
export const REGISTRY_KEY_PREFIX = "_provider-kit:";

export interface RunningProvider {
  /** `http://<host>:<port>` the provider answers on. */
  url: string;
  /** Drains HTTP calls, stops background work and the embedded server. Dedicated instances keep running. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** Registry tuning (tests shorten leases and retries); the store is always the Redis one. */
  registry?: Omit<RegistryOptions, "store">;
}

/** The server the provider administers: the configured one, or an embedded one it starts and stops. */
interface AdminServer {
  address: Address;
  stop(): Promise<void>;
}

async function adminServer(config: Config): Promise<AdminServer> {
  if (config.redisUrl) {
    const url = new URL(config.redisUrl);
    const address = {
      host: url.hostname,
      port: Number(url.port || 6379),
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: decodeURIComponent(url.password),
    };
    return { address, stop: async () => {} };
  }
  const dir = resolve(config.dataDir, "embedded");
  // Same port as last time: apps bound to shared instances keep their REDIS_PORT across restarts.
  const port = (await portOfLastRun(dir)) ?? (await freePort());
  const password = generatePassword();
  // A server still running here is a leftover of a run that crashed; it has that run's password.
  await stopRedisServer(dir);
  await ensureRedisServer({ dir, port, password, detached: false, binary: config.redisServer });
  return { address: { host: "127.0.0.1", port, password }, stop: () => stopRedisServer(dir) };
}

/** Where the registry lives: the primary Sentinel names (Sentinel mode), else the administered server. */
function registryConnection(config: Config, admin: RedisClient): RedisStoreOptions {
  if (!config.registrySentinel) return { client: admin };
  // Sentinel mode is for surviving the primary's loss: a write counts once a replica has it.
  return { sentinel: config.registrySentinel, waitForReplicas: 1 };
}

async function portOfLastRun(dir: string): Promise<number | undefined> {
  const config = await readFile(join(dir, "redis.conf"), "utf8").catch(() => "");
  const port = /^port (\d+)$/m.exec(config)?.[1];
  return port === undefined ? undefined : Number(port);
}

export async function startRedisProvider(config: Config, options: StartOptions): Promise<RunningProvider> {
  const server = await adminServer(config);
  try {
    return await serve(config, options, server);
  } catch (error) {
    await server.stop(); // an embedded server must not outlive a failed start
    throw error;
  }
}

async function serve(config: Config, options: StartOptions, server: AdminServer): Promise<RunningProvider> {
  const log = options.logger;
  const { address } = server;
  // Long-lived, so it reconnects; each plan call fails fast while the server is away.
  const admin = redisClient(address, { reconnect: true });
  admin.on("error", (error: unknown) => log.warn({ err: error }, "connection to the administered Redis failed; reconnecting"));
  await admin.connect();
  if (!(await hasAclFile(admin))) {
    log.warn("The Redis server has no aclfile: the users of bound apps will be lost if that server restarts.");
  }
  const store: Store = new RedisStore({ ...registryConnection(config, admin), keyPrefix: REGISTRY_KEY_PREFIX, log });

  const shared = sharedPlan({ admin, host: address.host, port: address.port });
  const dedicated = dedicatedPlan({
    dir: resolve(config.dataDir, "instances"),
    binary: config.redisServer,
    maxmemory: config.dedicatedMaxmemory,
  });
  const provider = createProvider(redisHandlers([shared, dedicated]), {
    auth: { usernames: [config.username], password: config.password },
    registry: { ...options.registry, store },
    logger: log,
  });
  // Dedicated processes usually survived our restart; those that did not are started again.
  const adopted = dedicated.adopt(store, log);

  const http = createServer(provider).listen({ port: config.port, host: config.host });
  await once(http, "listening");
  const { port } = http.address() as AddressInfo;
  const url = `http://${config.host ?? "127.0.0.1"}:${port}`;
  log.info({ url }, "Redis provider listening");

  let closing: Promise<void> | undefined;
  const close = async () => {
    await provider.close();
    http.closeAllConnections();
    await new Promise((done) => http.close(done));
    await adopted;
    await store.close();
    admin.destroy();
    await server.stop();
  };
  return { url, close: () => (closing ??= close()) };
}
