/**
 * What `waitForReplicas` costs: the latency of one registry write (a binding saved, under the
 * instance lock as every write is) through a Redis Sentinel group on loopback (primary, one
 * replica, three sentinels), with and without `WAIT` for the replica; and locked writes per
 * second, each writer on an instance of its own. Not part of `npm test` or `npm run bench`:
 *
 *   npx tsx bench/registry-writes.ts [writes per round, default 500] [rounds, default 6]
 *
 * Rounds alternate the two settings, so load from elsewhere on the machine hits both alike.
 */
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";
import { RedisStore } from "@provider-kit/redis-store";
import type { BindingRecord } from "provider-kit";
import { startSentinelGroup } from "../test/support/redis-sentinel.js";
import { median } from "./tables.js";

const writesPerRound = Number(process.argv[2] ?? 500);
const rounds = Number(process.argv[3] ?? 6);
const CONCURRENT = 16;

const LOCK_WAIT_MS = 10_000;

const binding = (instance: string, n: number): BindingRecord => {
  const at = new Date().toISOString();
  return { instance, kind: "app", key: `app-${n}`, appName: `app-${n}`, createdAt: at, updatedAt: at };
};

/** Milliseconds of each of `count` writes, one after the other, each timed inside its lock. */
async function sequential(store: RedisStore, count: number): Promise<number[]> {
  const times: number[] = [];
  for (let n = 0; n < count; n++) {
    await store.withLock("bench", LOCK_WAIT_MS, async (held) => {
      const started = process.hrtime.bigint();
      await held.saveBinding(binding("bench", n));
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    });
  }
  return times;
}

/** Locked writes per second with CONCURRENT writers always in flight, each on its own instance. */
async function throughput(store: RedisStore, count: number): Promise<number> {
  let next = 0;
  const started = process.hrtime.bigint();
  const writer = async (_: unknown, index: number) => {
    const instance = `bench-${index}`;
    while (next < count) {
      const n = next++;
      await store.withLock(instance, LOCK_WAIT_MS, (held) => held.saveBinding(binding(instance, n)));
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT }, writer));
  return count / (Number(process.hrtime.bigint() - started) / 1e9);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const group = await startSentinelGroup();
const settings = { "no WAIT (default)": 0, "waitForReplicas: 1": 1 };
const stores = Object.entries(settings).map(([label, waitForReplicas]) => ({
  label,
  store: new RedisStore({ sentinel: group.address, keyPrefix: `bench-${waitForReplicas}:`, waitForReplicas }),
  latencies: [] as number[],
  rates: [] as number[],
}));
try {
  for (const { store } of stores) await sequential(store, 200); // warm-up: connections, script cache, JIT
  for (let round = 0; round < rounds; round++) {
    for (const entry of stores) {
      entry.latencies.push(...(await sequential(entry.store, writesPerRound)));
      entry.rates.push(await throughput(entry.store, writesPerRound));
    }
  }
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { encoding: "utf8" }).trim();
  console.log(`date: ${new Date().toISOString()}, commit ${commit}, ${availableParallelism()} CPUs, node ${process.version}`);
  console.log(`${rounds} rounds of ${writesPerRound} sequential writes, then ${writesPerRound} with ${CONCURRENT} in flight, per setting\n`);
  console.log("| setting | p50 | p95 | p99 | writes/s with 16 in flight (median of rounds) |");
  console.log("|---|---|---|---|---|");
  for (const { label, latencies, rates } of stores) {
    const sorted = [...latencies].sort((a, b) => a - b);
    const ms = (p: number) => `${percentile(sorted, p).toFixed(2)} ms`;
    console.log(`| ${label} | ${ms(50)} | ${ms(95)} | ${ms(99)} | ${Math.round(median(rates))} |`);
  }
} finally {
  await Promise.all(stores.map(({ store }) => store.close()));
  await group.stop();
}
