/**
 * Connections to Redis servers: the one place that knows how this provider connects.
 */
import { createClient } from "redis";

export interface Address {
  host: string;
  port: number;
  /** Absent: the `default` user. */
  username?: string;
  password: string;
}

/**
 * A client that fails fast: by default it does not reconnect (short-lived connections; callers
 * retry at their own level). A long-lived client asks for `reconnect`; while it is away its
 * calls still fail at once instead of waiting in a queue.
 */
export function redisClient(address: Address, options: { connectTimeoutMs?: number; reconnect?: boolean } = {}) {
  const client = createClient({
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
  try {
    await client.connect();
    return (await client.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    if (client.isOpen) client.destroy();
  }
}
