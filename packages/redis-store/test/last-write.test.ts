/**
 * A call's last write lets its instance lock go in the same script (`LAST_WRITE`): a bind is two
 * scripts in Redis, not three, and the fence still holds: a holder that lost its lock writes
 * nothing and frees nothing. On a real redis-server.
 */
import { afterAll, describe, expect, it } from "vitest";
import { openRegistry } from "provider-kit/store";
import { RedisStore } from "../src/index.js";
import { LAST_WRITE, LockLostError } from "provider-kit/store";
import type { BindingRecord } from "provider-kit";
import { bindAppRequest, context, createRequest, gate, rejection, silent, useRawRedis } from "./helpers.js";

const binding = (appHost: string): BindingRecord => ({
  instance: "cache",
  kind: "app",
  key: "web",
  appName: "web",
  appHost,
  createdAt: "t",
  updatedAt: "t",
});

describe("RedisStore: a call's last write and its lock's release in one script", () => {
  const redis = useRawRedis();
  const stores: RedisStore[] = [];
  const open = (keyPrefix: string) => {
    const store = new RedisStore({ url: redis.url, keyPrefix });
    stores.push(store);
    return store;
  };

  afterAll(async () => {
    await Promise.all(stores.map((store) => store.close()));
  });

  /** How many scripts Redis has run since the last CONFIG RESETSTAT. */
  async function scriptsRun(): Promise<number> {
    const stats = await redis.raw.info("commandstats");
    let calls = 0;
    for (const match of stats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(match[1]);
    return calls;
  }

  it("binds an app in three scripts (lock with the reads, the write marked unanswered, the mark cleared with the release), leaving the lock free", async () => {
    const store = open("bind:");
    const lifecycle = openRegistry({ create: () => {}, destroy: () => {}, bindApp: () => ({ USER: "web" }), unbindApp: () => {} }, { store }, silent);
    try {
      await lifecycle.create(createRequest("cache"), context());
      await lifecycle.bindApp(bindAppRequest("cache", "warm-up"), context()); // scripts loaded
      await redis.raw.sendCommand(["CONFIG", "RESETSTAT"]);
      expect(await lifecycle.bindApp(bindAppRequest("cache", "web"), context())).toEqual({ USER: "web" });
      // The mark costs a round trip, as create's does: a write the store gave up on may land later (stalled-bind.test.ts).
      expect(await scriptsRun()).toBe(3);
      expect(await redis.raw.exists("bind:lock:cache")).toBe(0);
      expect(await store.getBinding("cache", "app", "web")).toMatchObject({ appName: "web" });
    } finally {
      await lifecycle.close();
    }
  });

  it("refuses the last write of a holder whose lock was taken by another, and leaves the other's lock in place", async () => {
    const a = open("fence-last:");
    const b = open("fence-last:");
    const aIn = gate();
    const aWrites = gate();
    const aDone = a.withLock("cache", 1_000, async (held) => {
      aIn.open();
      await aWrites.opened;
      await held.saveBinding(binding("a.example.com"), LAST_WRITE);
    });
    await aIn.opened;
    await redis.raw.del("fence-last:lock:cache"); // what a failover that lost the lock does
    const bHolds = gate();
    const bGoes = gate();
    const bDone = b.withLock("cache", 1_000, async (held) => {
      await held.saveBinding(binding("b.example.com"));
      bHolds.open();
      await bGoes.opened;
    });
    await bHolds.opened;
    const bToken = await redis.raw.get("fence-last:lock:cache");
    aWrites.open();
    expect(await rejection(aDone)).toBeInstanceOf(LockLostError);
    expect(await redis.raw.get("fence-last:lock:cache")).toBe(bToken);
    bGoes.open();
    await bDone;
    expect((await b.getBinding("cache", "app", "web"))?.appHost).toBe("b.example.com");
  });
});
