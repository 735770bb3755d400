/**
 * What a call that waits for a busy instance is told, and what a `RedisStore` says at start
 * about a Redis that persists nothing: on real redis-server processes.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { Writable } from "node:stream";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { registryLifecycle } from "../../src/lifecycle/registry.js";
import { RedisStore } from "@provider-kit/redis-store";
import { MemoryStore } from "../../src/lifecycle/memory-store.js";
import { LockTimeoutError } from "../../src/lifecycle/store.js";
import { startRedisServer } from "../../../../test/support/redis-server.js";
import { eventually, gate, rejection, steps, useRawRedis } from "./helpers.js";

const HANDLERS = { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} };

/** A logger whose lines the test reads. */
function capturedLog() {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: "info" }, sink), lines };
}

describe("waiting for a busy instance on a RedisStore", () => {
  const redis = useRawRedis();

  afterAll(async () => {
    await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
  });

  it("a wait that runs out while its last try is still in Redis says another call is running, not that Redis is unreachable", async () => {
    const holder = new RedisStore({ url: redis.url, keyPrefix: "wait:" });
    const waiter = new RedisStore({ url: redis.url, keyPrefix: "wait:" });
    const held = gate();
    const release = gate();
    try {
      const holding = holder.withLock("cache", 1_000, async () => {
        held.open();
        await release.opened;
      });
      await held.opened;
      // Redis holds every try to take the lock from now on (they are scripts that write), so
      // the waiter's wait (0.5 s) ends with a try in flight; Redis itself still answers.
      await redis.raw.sendCommand(["CLIENT", "PAUSE", "600000", "WRITE"]);
      const error = await rejection(waiter.withLock("cache", 500, async () => {}));
      expect(await redis.raw.ping()).toBe("PONG");
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect([error.status, error.message]).toEqual([503, 'Another operation on instance "cache" is still running; try again in a moment.']);
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      release.open();
      await holding;
    } finally {
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      release.open();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});

describe("the queue of callers waiting for an instance's lock on a RedisStore", () => {
  const redis = useRawRedis();


  /** Redis's clock, in microseconds: what the queue's arrivals and lapse times are counted in. */
  async function redisNow(): Promise<number> {
    const [seconds, micros] = await redis.raw.sendCommand<[string, string]>(["TIME"]);
    return Number(seconds) * 1_000_000 + Number(micros);
  }

  it("a waiter whose process died holds the queue back only until its place lapses", async () => {
    const store = new RedisStore({ url: redis.url, keyPrefix: "dead-waiter:" });
    try {
      // A waiter first in line that will never try again: its place lapses half a second from now (Redis time).
      const lapsesAt = (await redisNow()) + 500_000;
      await redis.raw.zAdd("dead-waiter:lock-queue:cache", { score: 0, value: "dead" });
      await redis.raw.zAdd("dead-waiter:lock-lapse:cache", { score: lapsesAt, value: "dead" });

      await store.withLock("cache", 20_000, async () => {});
      expect(await redis.raw.keys("dead-waiter:lock-*")).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("a waiter that gives up leaves the queue, so the callers behind it are not held back", async () => {
    const holder = new RedisStore({ url: redis.url, keyPrefix: "give-up:" });
    const waiter = new RedisStore({ url: redis.url, keyPrefix: "give-up:" });
    const held = gate();
    const release = gate();
    try {
      const holding = holder.withLock("cache", 1_000, async () => {
        held.open();
        await release.opened;
      });
      await held.opened;
      const waiting = rejection(waiter.withLock("cache", 1_000, async () => {}));
      // When the waiter's place would lapse by itself (its latest try's is later still).
      const lapsesAt = await eventually(async () => (await redis.raw.zRangeWithScores("give-up:lock-lapse:cache", 0, -1))[0]?.score);
      expect(await waiting).toBeInstanceOf(LockTimeoutError);
      await eventually(async () => (await redis.raw.keys("give-up:lock-*")).length === 0);
      expect(await redisNow()).toBeLessThan(lapsesAt);
      release.open();
      await holding;
    } finally {
      release.open();
      await Promise.all([holder.close(), waiter.close()]);
    }
  });
});

describe("a MemoryStore", () => {
  it("logs one warning at start saying what it forgets and how to choose a durable store", async () => {
    const { log, lines } = capturedLog();
    const lifecycle = registryLifecycle(HANDLERS, { store: new MemoryStore() }, log, steps);
    try {
      const warning = await eventually(() => lines.find((line) => /MemoryStore/.test(line.msg)));
      expect(warning.level).toBe(40); // warn
      expect(warning.msg).toMatch(/forgotten when this process stops/);
      expect(warning.msg).toMatch(/such as RedisStore from @provider-kit\/redis-store \(.*redis-store\.md\)/);
      expect(lines.filter((line) => line.level === 40)).toHaveLength(1);
    } finally {
      await lifecycle.close();
    }
  });

  it("cites the Redis store's page as a path that opens from the working directory, wherever that is", async () => {
    // Another directory than the repository's root, where docs/operations/redis-store.md does not open.
    const cwd = path.resolve(import.meta.dirname, "..");
    const module = path.resolve(import.meta.dirname, "../../src/lifecycle/memory-store.ts");
    const script = `const { MemoryStore } = await import(${JSON.stringify(module)}); console.log(await new MemoryStore().persistenceWarning());`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd });
    const cited = /\(([^()]+\.md)\)\.$/.exec(stdout.trim())?.[1];
    expect(cited, stdout).toBeDefined();
    expect(path.isAbsolute(cited!)).toBe(false);
    expect(existsSync(path.resolve(cwd, cited!)), `${cited} from ${cwd}`).toBe(true);
  });

  it("says the provider's own advice for production when given one", async () => {
    const advice = "For production, set REGISTRY_STORE to a Redis URL.";
    const warning = await new MemoryStore({ productionAdvice: advice }).persistenceWarning();
    expect(warning).toMatch(/forgotten when this process stops/);
    expect(warning.endsWith(` ${advice}`)).toBe(true);
    expect(warning).not.toMatch(/RedisStore/);
  });
});

describe("a RedisStore whose Redis persists nothing", () => {
  it("logs a warning at start saying what a restart of that Redis loses; none with AOF on", async () => {
    const bare = await startRedisServer(); // --save "" --appendonly no
    const durable = await startRedisServer({ persistence: true });
    const { log, lines } = capturedLog();
    const stores = [new RedisStore({ url: bare.url }), new RedisStore({ url: durable.url })];
    const lifecycle = registryLifecycle(HANDLERS, { store: stores[0]! }, log, steps);
    try {
      const warning = await eventually(() => lines.find((line) => /persists nothing/.test(line.msg)));
      expect(warning.level).toBe(40); // warn
      expect(warning.msg).toMatch(/no RDB save points, appendonly no/);
      expect(warning.msg).toMatch(/every instance and binding .* is lost, later calls on them answer 404/);
      expect(await stores[1]!.persistenceWarning()).toBeUndefined();
    } finally {
      await lifecycle.close();
      await Promise.all(stores.map((store) => store.close()));
      await Promise.all([bare.stop(), durable.stop()]);
    }
  });
});
