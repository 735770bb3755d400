/**
 * Puts the Redis provider together: the Redis server it administers for the `shared` plan
 * (REDIS_URL, or an embedded server), the Redis of its registry (REGISTRY_REDIS_URL, or a second
 * embedded server, so no tenant can ever reach it), both plans, and the HTTP server.
 */
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import { createProvider, type RegistryOptions, type Store } from "provider-kit";
import { RedisStore, type RedisStoreClient } from "@provider-kit/redis-store";
import { REDIS_BROKER } from "./broker.js";
import { credentialChecker, generatePassword, hasAclFile } from "./acl.js";
import { AclJournal } from "./acl-journal.js";
import type { Config } from "./config.js";
import { addressOfUrl, redisClient, sentinelClient, type Address } from "@provider-kit/redis-store/connection";
import { lockDataDir, type DataDirLock } from "@provider-kit/platform/redis-process";
import { dedicatedPlan } from "./dedicated.js";
import { redisHandlers } from "./handlers.js";
import { startOnFreePort, superviseRedisServer, type RedisServerSpec } from "@provider-kit/platform/redis-server";
import { sharedPlan } from "./shared.js";

/**
 * Registry keys start with `_`, which no instance name can (see NAME_PATTERN), so no instance's
 * key prefix `<name>:`, and so no app's ACL key pattern, ever covers them (this matters when
 * one URL serves both the registry and the tenants).
 */
export const REGISTRY_KEY_PREFIX = "_provider-kit:";
/** The journal of the shared server's ACL changes not yet in its ACL file (see acl-journal.ts). */
export const ACL_JOURNAL_KEY = `${REGISTRY_KEY_PREFIX}acl-journal`;

export interface RunningProvider {
  /** `http://<host>:<port>` the provider answers on. */
  url: string;
  /** `http://<host>:<port>/metrics` when METRICS_PORT serves the metrics apart from the API. */
  metricsUrl?: string;
  /** Drains HTTP calls, stops background work and the embedded servers. Dedicated instances keep running. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger: Logger;
  /** Registry tuning (tests shorten leases and retries); the store is always the Redis one. */
  registry?: Omit<RegistryOptions, "store">;
}

/** A Redis server the provider uses: one given by URL, or an embedded one it runs and stops. */
interface UsedServer {
  address: Address;
  /** Set for an embedded server: its data directory. */
  dir?: string;
  stop(): Promise<void>;
}

/** A server given by URL: someone else runs it. */
async function externalServer(redisUrl: string): Promise<UsedServer> {
  return { address: addressOfUrl(redisUrl), stop: async () => {} };
}

type EmbeddedSettings = Pick<RedisServerSpec, "maxmemory" | "maxmemoryPolicy" | "syncEveryWrite">;

/** An embedded server under `<dataDir>/<name>`, supervised: restarted with back-off if it dies. */
async function embeddedServer(config: Config, dataDir: string, name: string, log: Logger, settings: EmbeddedSettings): Promise<UsedServer> {
  const dir = join(dataDir, name);
  // Same port as last time: apps bound to shared instances keep their REDIS_PORT across restarts.
  const supervise = (port: number) =>
    superviseRedisServer({ dir, port, password: generatePassword(), binary: config.redisServer, ...settings }, { log: log.child({ server: name }) });
  const lastPort = await portOfLastRun(dir);
  const server = lastPort === undefined ? await startOnFreePort(supervise) : await supervise(lastPort);
  return { address: server.address, dir, stop: () => server.stop() };
}

/**
 * The registry's own client, when it has a server apart from the administered one: the primary
 * the sentinels name (Sentinel mode) or a server of its own. Long-lived, so it reconnects.
 */
async function registryClientOf(config: Config, servers: Servers, log: Logger): Promise<RedisStoreClient | undefined> {
  const { administered, registry } = servers;
  const onError = (error: unknown) => log.warn({ err: error }, "connection to the registry's Redis failed; reconnecting");
  if (config.registrySentinel) {
    const client = sentinelClient(config.registrySentinel);
    client.on("error", onError);
    client.connect().catch(onError); // calls answer 503 until the sentinels name a primary
    return client;
  }
  if (registry === undefined || registry === administered) return undefined;
  const client = redisClient(registry.address, { reconnect: true });
  client.on("error", onError);
  await client.connect();
  return client;
}

async function portOfLastRun(dir: string): Promise<number | undefined> {
  const config = await readFile(join(dir, "redis.conf"), "utf8").catch(() => "");
  const port = /^port (\d+)$/m.exec(config)?.[1];
  return port === undefined ? undefined : Number(port);
}

interface Servers {
  /** Where the `shared` plan's instances live: the server tenants reach. */
  administered: UsedServer;
  /**
   * Where the registry lives; the same object as `administered` when one URL serves both;
   * absent in Sentinel mode, where it lives on the primary the sentinels name.
   */
  registry?: UsedServer;
}

async function startServers(config: Config, dataDir: string, log: Logger): Promise<Servers> {
  const started: UsedServer[] = [];
  const use = async (server: Promise<UsedServer>) => {
    started.push(await server);
    return started.at(-1)!;
  };
  try {
    const administered = await use(
      config.redisUrl
        ? externalServer(config.redisUrl)
        : embeddedServer(config, dataDir, "embedded", log, { maxmemory: config.sharedMaxmemory, maxmemoryPolicy: config.sharedMaxmemoryPolicy }),
    );
    if (config.registrySentinel) return { administered };
    const registryUrl = config.registryRedisUrl ?? config.redisUrl;
    if (registryUrl !== undefined && registryUrl === config.redisUrl) {
      log.warn(
        "The registry shares its Redis server with the tenants of the shared plan (REDIS_URL): a tenant who crashes or fills that server " +
          "takes the registry down with it. Set REGISTRY_REDIS_URL to a server tenants cannot reach.",
      );
      return { administered, registry: administered };
    }
    const registry = await use(
      registryUrl ? externalServer(registryUrl) : embeddedServer(config, dataDir, "registry", log, { syncEveryWrite: true }),
    );
    return { administered, registry };
  } catch (error) {
    await Promise.all(started.map((server) => server.stop())); // no embedded server outlives a failed start
    throw error;
  }
}

const describeAddress = ({ host, port }: Address) => `${host}:${port}`;

export async function startRedisProvider(config: Config, options: StartOptions): Promise<RunningProvider> {
  // Before anything in the directory is touched: a second provider must not stop the first one's servers.
  const lock = await lockDataDir(config.dataDir);
  let servers: Servers | undefined;
  try {
    servers = await startServers(config, lock.dir, options.logger);
    return await serve(config, options, servers, lock);
  } catch (error) {
    // No embedded server outlives a failed start (stopping one twice does no harm).
    await servers?.administered.stop();
    await servers?.registry?.stop();
    await lock.release();
    throw error;
  }
}

async function listen(server: Server, port: number, host: string | undefined): Promise<string> {
  server.listen({ port, host });
  await once(server, "listening");
  return `http://${host ?? "127.0.0.1"}:${(server.address() as AddressInfo).port}`;
}

async function serve(config: Config, options: StartOptions, servers: Servers, lock: DataDirLock): Promise<RunningProvider> {
  const log = options.logger;
  const { administered, registry } = servers;
  // Long-lived, so they reconnect (an embedded server that died is restarted); calls fail fast meanwhile.
  const admin = redisClient(administered.address, { reconnect: true });
  admin.on("error", (error: unknown) => log.warn({ err: error }, "connection to the administered Redis failed; reconnecting"));
  await admin.connect();
  if (!(await hasAclFile(admin))) {
    log.warn("The Redis server has no aclfile: the users of bound apps will be lost if that server restarts.");
  }
  const registryClient = await registryClientOf(config, servers, log);
  // Sentinel mode is for surviving the primary's loss: a write counts once a replica has it.
  const waitForReplicas = config.registrySentinel ? 1 : 0;
  const store: Store = new RedisStore({ client: registryClient ?? admin, waitForReplicas, keyPrefix: REGISTRY_KEY_PREFIX, log });
  const users = new AclJournal({
    admin,
    registry: registryClient ?? admin,
    key: ACL_JOURNAL_KEY,
    waitForReplicas,
    store,
    saveIntervalMs: config.aclSaveIntervalMs,
    log,
  });

  const checker = await credentialChecker(administered.address);
  const shared = sharedPlan({ admin, users, checker, host: administered.address.host, port: administered.address.port });
  const dedicated = dedicatedPlan({
    dir: join(lock.dir, "instances"),
    binary: config.redisServer,
    maxmemory: config.dedicatedMaxmemory,
  });
  const provider = createProvider(redisHandlers([shared, dedicated], store, config.clusterName), {
    auth: { usernames: [config.username], password: config.password },
    registry: { ...options.registry, store },
    logger: log,
    healthChecks: { "administered redis": () => admin.ping() },
    metricsRoute: config.metricsPort === undefined,
    osb: REDIS_BROKER,
  });
  // Dedicated processes usually survived our restart; those that did not are started again.
  // ACL changes an earlier run left unsaved are saved (made again if the server lost them; on
  // failure, retried in the background), then shared users bound by an earlier version get
  // today's rules.
  const adopted = Promise.all([
    dedicated.adopt(store, log),
    users
      .start()
      .catch(() => {}) // logged by the journal
      .then(() => shared.adopt(store, log))
      .catch((error: unknown) => log.error({ err: error }, "updating the users of shared instances failed")),
  ]);

  const http = createServer(provider.requestListener); // the provider's routes straight from node:http
  const metrics = config.metricsPort === undefined ? undefined : createServer((req, res) => provider.serveMetrics(req, res));
  let closing: Promise<void> | undefined;
  const close = async () => {
    await provider.close();
    for (const server of [http, metrics]) {
      server?.closeAllConnections();
      await new Promise((done) => (server?.listening ? server.close(done) : done(undefined)));
    }
    await adopted;
    await dedicated.close();
    await users.close();
    await store.close();
    admin.destroy();
    checker.close();
    await registryClient?.destroy();
    await administered.stop();
    if (registry !== administered) await registry?.stop();
    await lock.release();
  };

  let url: string;
  let metricsUrl: string | undefined;
  try {
    url = await listen(http, config.port, config.host);
    metricsUrl = metrics && `${await listen(metrics, config.metricsPort!, config.host)}/metrics`;
  } catch (error) {
    await close(); // a taken port: nothing of this start may keep running
    throw error;
  }
  log.info(
    {
      url,
      metricsUrl: metricsUrl ?? `${url}/metrics`,
      dataDir: lock.dir,
      administeredRedis: `${describeAddress(administered.address)}${administered.dir ? ` (embedded, ${administered.dir})` : ""}`,
      registryRedis: registry
        ? `${describeAddress(registry.address)}${registry.dir ? ` (embedded, ${registry.dir})` : ""}`
        : `the primary of Sentinel "${config.registrySentinel!.name}"`,
    },
    "Redis provider listening",
  );
  return { url, metricsUrl, close: () => (closing ??= close()) };
}
