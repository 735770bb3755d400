/**
 * What a call that waits for a busy instance is told, and what a `RedisStore` says at start
 * about a Redis that persists nothing: on real redis-server processes.
 */
import { afterAll, describe, expect, it } from "vitest";
import { LockTimeoutError, openRegistry } from "provider-kit/store";
import { RedisStore } from "../src/index.js";
import { startRedisServer } from "../../../test/support/redis-server.js";
import { capturedLog, eventually, gate, rejection, useRawRedis } from "./helpers.js";

const HANDLERS = { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} };

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

describe("a RedisStore whose Redis persists nothing", () => {
  it("logs a warning at start saying what a restart of that Redis loses; none with AOF on", async () => {
    const bare = await startRedisServer(); // --save "" --appendonly no
    const durable = await startRedisServer({ persistence: true });
    const { log, lines } = capturedLog();
    const stores = [new RedisStore({ url: bare.url }), new RedisStore({ url: durable.url })];
    const lifecycle = openRegistry(HANDLERS, { store: stores[0]! }, log);
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
