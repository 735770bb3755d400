/**
 * A real, throw-away Redis Sentinel group for tests: a primary, its replica and three sentinels
 * watching them, all on free loopback ports.
 *
 *   const group = await startSentinelGroup();    // sentinels agree on the primary and its replica
 *   ... new RedisStore({ sentinel: group.address }) ...
 *   await group.stop();                          // every process gone, even a killed one
 *
 * Sentinels here declare a primary down after 1 s (production setups use several seconds).
 */
import { createClient } from "@redis/client";
import type { SentinelAddress } from "@provider-kit/redis-store/connection";
import { eventually } from "./eventually.js";
import { startRedisServer, type RedisServer } from "./redis-server.js";

export interface SentinelGroup {
  /** What a store is given to follow the group's primary. */
  address: SentinelAddress;
  primary: RedisServer;
  replica: RedisServer;
  sentinels: RedisServer[];
  /** The port of the server the sentinels currently call primary. */
  primaryPort(): Promise<number>;
  /** Stops every server and sentinel started (those already dead included). Safe to call twice. */
  stop(): Promise<void>;
}

const NAME = "registry";
const DOWN_AFTER_MS = 1_000;

/** One sentinel's answer to `SENTINEL <subcommand> <name>`. */
async function askSentinel(port: number, command: string[]): Promise<unknown> {
  const client = createClient({ socket: { host: "127.0.0.1", port, reconnectStrategy: false } });
  client.on("error", () => {});
  await client.connect();
  try {
    return await client.sendCommand(["SENTINEL", ...command]);
  } finally {
    client.destroy();
  }
}

/** A sentinel's description of a server (a map in RESP3, a flat field, value list in RESP2). */
function fields(reply: unknown): Record<string, string> {
  if (!Array.isArray(reply)) return (reply ?? {}) as Record<string, string>;
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < reply.length; i += 2) record[String(reply[i])] = String(reply[i + 1]);
  return record;
}

export async function startSentinelGroup(): Promise<SentinelGroup> {
  const started: RedisServer[] = [];
  const stop = () => Promise.all(started.map((server) => server.stop())).then(() => {});
  try {
    const primary = await startRedisServer();
    started.push(primary);
    const replica = await startRedisServer({ args: ["--replicaof", `127.0.0.1 ${primary.port}`] });
    started.push(replica);
    const config = [
      `sentinel monitor ${NAME} 127.0.0.1 ${primary.port} 2`,
      `sentinel down-after-milliseconds ${NAME} ${DOWN_AFTER_MS}`,
      `sentinel failover-timeout ${NAME} 10000`,
      "",
    ].join("\n");
    const sentinels: RedisServer[] = [];
    for (let i = 0; i < 3; i++) {
      const sentinel = await startRedisServer({ sentinelConfig: config });
      started.push(sentinel);
      sentinels.push(sentinel);
    }
    // A failover needs every sentinel to know the replica and the other sentinels (they find
    // each other through the primary, every 2 s) and the replica to be in sync.
    await eventually(async () => {
      for (const sentinel of sentinels) {
        const master = fields(await askSentinel(sentinel.port, ["MASTER", NAME]));
        if (master["num-slaves"] !== "1" || master["num-other-sentinels"] !== "2") return undefined;
        const [replica] = (await askSentinel(sentinel.port, ["REPLICAS", NAME])) as unknown[];
        if (fields(replica)["master-link-status"] !== "ok") return undefined;
      }
      return true;
    }, 30_000);

    let stopped: Promise<void> | undefined;
    return {
      address: { name: NAME, sentinels: sentinels.map((sentinel) => ({ host: "127.0.0.1", port: sentinel.port })) },
      primary,
      replica,
      sentinels,
      primaryPort: async () => {
        for (const sentinel of sentinels) {
          const reply = await askSentinel(sentinel.port, ["GET-MASTER-ADDR-BY-NAME", NAME]).catch(() => undefined);
          if (Array.isArray(reply)) return Number(reply[1]);
        }
        throw new Error("no sentinel answers");
      },
      stop: () => (stopped ??= stop()),
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
