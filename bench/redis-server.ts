/**
 * A redis-server of the benchmarks' own (`npm run bench`'s Redis-store row, `npm run bench:redis`):
 * started on a free loopback port in a fresh directory, unpinned, and read through its own
 * counters (INFO) to count what the server under test asked of it.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { redisClient, type Address, type RedisClient } from "@provider-kit/redis-store/connection";
import { ensureRedisServer, runningPid, startOnFreePort, stopRedisServer } from "@provider-kit/platform/redis-server";

export interface BenchRedis {
  /** `redis://:<password>@127.0.0.1:<port>`, for the server under test (BENCH_REDIS_URL). */
  url: string;
  address: Address;
  /** Its data directory (the provider's log file may go there too). */
  dir: string;
  pid: number;
  /** The harness's own connection, for INFO. */
  client: RedisClient;
  stop(): Promise<void>;
}

export async function startBenchRedis(label: string): Promise<BenchRedis> {
  const dir = mkdtempSync(join(tmpdir(), `provider-kit-bench-redis-${label}-`));
  const password = randomBytes(16).toString("hex");
  const port = await startOnFreePort(async (port) => {
    await ensureRedisServer({ dir, port, password, detached: false, binary: "redis-server" });
    return port;
  });
  const pid = (await runningPid(dir)) ?? -1;
  const address: Address = { host: "127.0.0.1", port, password };
  const client = redisClient(address);
  await client.connect();
  return {
    url: `redis://:${password}@127.0.0.1:${port}`,
    address,
    dir,
    pid,
    client,
    async stop() {
      client.destroy();
      await stopRedisServer(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Counters {
  connections: number;
  commands: number;
  usedMemoryBytes: number;
  /** Per command: calls and microseconds Redis spent running them. */
  byCommand: Map<string, { calls: number; usec: number }>;
}

/** The Redis server's own counters (INFO stats and commandstats). */
export async function redisCounters(client: RedisClient): Promise<Counters> {
  const info = await client.info("everything");
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, "m").exec(info)?.[1] ?? Number.NaN);
  const byCommand = new Map<string, { calls: number; usec: number }>();
  for (const [, command, calls, usec] of info.matchAll(/^cmdstat_(\S+):calls=(\d+),usec=(\d+)/gm)) {
    byCommand.set(command!, { calls: Number(calls), usec: Number(usec) });
  }
  return {
    connections: field("total_connections_received"),
    commands: field("total_commands_processed"),
    usedMemoryBytes: field("used_memory"),
    byCommand,
  };
}
