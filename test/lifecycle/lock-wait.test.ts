/**
 * What a call that waits for a busy instance is told, and what a `RedisStore` says at start
 * about a Redis that persists nothing: on real redis-server processes.
 */
import { Writable } from "node:stream";
import { createClient } from "@redis/client";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registryLifecycle } from "../../src/lifecycle/registry.js";
import { RedisStore } from "../../src/lifecycle/redis-store.js";
import { LockTimeoutError } from "../../src/lifecycle/store.js";
import { startRedisServer, type RedisServer } from "../support/redis-server.js";
import { eventually, gate, rejection, steps } from "./helpers.js";

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
  let redis: RedisServer;
  let raw: ReturnType<typeof createClient>;

  beforeAll(async () => {
    redis = await startRedisServer();
    raw = createClient({ url: redis.url });
    await raw.connect();
  });
  afterAll(async () => {
    await raw.sendCommand(["CLIENT", "UNPAUSE"]);
    await raw.close();
    await redis.stop();
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
      await raw.sendCommand(["CLIENT", "PAUSE", "600000", "WRITE"]);
      const error = await rejection(waiter.withLock("cache", 500, async () => {}));
      expect(await raw.ping()).toBe("PONG");
      expect(error).toBeInstanceOf(LockTimeoutError);
      expect([error.status, error.message]).toEqual([503, 'Another operation on instance "cache" is still running; try again in a moment.']);
      await raw.sendCommand(["CLIENT", "UNPAUSE"]);
      release.open();
      await holding;
    } finally {
      await raw.sendCommand(["CLIENT", "UNPAUSE"]);
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
