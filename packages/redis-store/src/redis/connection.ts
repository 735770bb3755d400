/**
 * Connections to Redis servers: the one place that knows how this provider connects.
 */
import { createRequire } from "node:module";
import type { ErrorReply, RedisClientType, RedisSentinelType } from "@redis/client";

/** A client of a single server or of a Sentinel-managed primary. */
export type RedisStoreClient = RedisClientType | RedisSentinelType;

/** A Redis primary found through Redis Sentinel. */
export interface SentinelAddress {
  /** The name the sentinels monitor the primary under (`sentinel monitor <name> ...`). */
  name: string;
  /** Some of the sentinels (three is plenty): any one that answers tells where the primary is. */
  sentinels: Array<{ host: string; port: number }>;
  /** Credentials of the Redis servers (primary and replicas), not of the sentinels. */
  username?: string;
  password?: string;
}

type NodeRedis = typeof import("@redis/client");
let loaded: NodeRedis | undefined;

/**
 * node-redis, loaded on first use instead of at import: the library's index reaches this module
 * through `RedisStore`, and a provider that never creates a Redis client should not load its
 * ~700 modules (a third of a compiled provider's start-up).
 */
export function nodeRedis(): NodeRedis {
  return (loaded ??= createRequire(import.meta.url)("@redis/client") as NodeRedis);
}

export interface Address {
  host: string;
  port: number;
  /** Absent: the `default` user. */
  username?: string;
  password: string;
}

/** The address a `redis://[user:password@]host[:port]` URL names (port 6379 when absent). */
export function addressOfUrl(redisUrl: string): Address {
  const url = new URL(redisUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 6379),
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: decodeURIComponent(url.password),
  };
}

/**
 * A client that fails fast: by default it does not reconnect (short-lived connections; callers
 * retry at their own level). A long-lived client asks for `reconnect`; while it is away its
 * calls still fail at once instead of waiting in a queue.
 */
export function redisClient(address: Address, options: { connectTimeoutMs?: number; reconnect?: boolean } = {}) {
  const client = nodeRedis().createClient({
    socket: {
      host: address.host,
      port: address.port,
      connectTimeout: options.connectTimeoutMs ?? 5_000,
      reconnectStrategy: options.reconnect ? undefined : false,
    },
    username: address.username,
    password: address.password,
    disableOfflineQueue: true,
  });
  client.on("error", () => {}); // failures surface through the awaited calls instead
  return client;
}

export type RedisClient = ReturnType<typeof redisClient>;

/**
 * A client of the primary the sentinels name, following it through a failover; it fails fast
 * too. `commandOptions` as node-redis takes them (`{ timeout: 0 }`: no timer of its own per
 * command, for a caller that bounds each operation itself).
 */
export function sentinelClient(address: SentinelAddress, commandOptions?: { timeout: number }) {
  return nodeRedis().createSentinel({
    name: address.name,
    sentinelRootNodes: address.sentinels,
    nodeClientOptions: { username: address.username, password: address.password, disableOfflineQueue: true },
    sentinelClientOptions: { disableOfflineQueue: true },
    commandOptions,
  });
}

/** Connects, runs `work`, disconnects. */
export async function withConnection<T>(address: Address, work: (client: RedisClient) => Promise<T>): Promise<T> {
  const client = redisClient(address);
  await client.connect();
  try {
    return await work(client);
  } finally {
    client.destroy();
  }
}

/** true when a Redis server answers PING at `address` with these credentials. */
export async function answersPing(address: Address, timeoutMs = 2_000): Promise<boolean> {
  const client = redisClient(address, { connectTimeoutMs: timeoutMs });
  // The whole exchange is bounded, not only the TCP connect: a process that is not Redis may
  // accept the connection and never answer the handshake.
  let timer: NodeJS.Timeout | undefined;
  const silent = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)));
  const ping = (async () => {
    await client.connect();
    return (await client.ping()) === "PONG";
  })().catch(() => false);
  try {
    return await Promise.race([ping, silent]);
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/**
 * Replies that mean "this server cannot serve right now" (a replica not yet promoted, a server
 * loading its data...): an outage to wait out, unlike a reply that reveals a bug.
 */
const TRANSIENT_REPLY = /^(READONLY|LOADING|MASTERDOWN|NOREPLICAS|TRYAGAIN|BUSY)\b/;

/** A reply (for a pipeline: any of its replies) that says the server cannot serve right now. */
export function isTransientReply(error: ErrorReply): boolean {
  const replies = error instanceof nodeRedis().MultiErrorReply ? [...error.errors()] : [error];
  return replies.some((reply) => TRANSIENT_REPLY.test(reply.message));
}

const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH"]);

/** Redis is away or cannot serve right now (a lost, refused or timed-out connection, a transient reply): not a bug. */
export function isRedisOutage(error: unknown): boolean {
  const redis = nodeRedis();
  if (error instanceof redis.ErrorReply) return isTransientReply(error);
  const connectionErrors = [
    redis.ClientClosedError,
    redis.ClientOfflineError,
    redis.ConnectionTimeoutError,
    redis.SocketClosedUnexpectedlyError,
    redis.SocketTimeoutError,
  ];
  if (connectionErrors.some((kind) => error instanceof kind)) return true;
  return NETWORK_CODES.has(String((error as NodeJS.ErrnoException | undefined)?.code));
}
