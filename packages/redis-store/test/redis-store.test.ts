/**
 * What only the Redis store promises: its documented key layout under a prefix, state that
 * outlives the process, locks and leases that expire when their holder dies and are never
 * released by someone else, and a client of the caller's own.
 */
import { createClient } from "@redis/client";
import { afterEach, describe, expect, it } from "vitest";
import { openRegistry } from "provider-kit/store";
import { RedisStore } from "../src/index.js";
import type { InstanceRecord } from "provider-kit";
import { startRedisServer } from "../../../test/support/redis-server.js";
import { bindAppRequest, context, createRequest, eventually, gate, rejection, silent, useRawRedis } from "./helpers.js";

const record = (name: string, extra: Partial<InstanceRecord> = {}): InstanceRecord => ({
  name,
  tags: [],
  parameters: {},
  state: "ready",
  data: {},
  createdAt: "2026-01-01T00:00:00.000Z",
  updatedAt: "2026-01-01T00:00:00.000Z",
  ...extra,
});

/** Writes a record as the registry does: under the instance lock. */
const save = (store: RedisStore, saved: InstanceRecord) => store.withLock(saved.name, 1_000, (held) => held.saveInstance(saved));

describe("RedisStore", () => {
  const redis = useRawRedis();
  let opened: RedisStore[] = [];
  const open = (keyPrefix: string, lockTtlMs?: number) => {
    const store = new RedisStore({ url: redis.url, keyPrefix, lockTtlMs });
    opened.push(store);
    return store;
  };

  afterEach(async () => {
    await Promise.all(opened.map((store) => store.close()));
    opened = [];
  });

  it("keeps its data under the documented keys, and only under its prefix", async () => {
    await redis.raw.set("unrelated", "kept");
    const store = open("layout:");
    const lifecycle = openRegistry(
      { create: () => ({ data: { port: 1 } }), destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} },
      { store },
      silent,
    );
    await lifecycle.create(createRequest("cache"), context());
    await lifecycle.bindApp(bindAppRequest("cache", "web"), context());
    await save(store, record("pending-one", { step: { kind: "provision", attempts: 0, deadline: "2099-01-01T00:00:00.000Z" } }));
    await lifecycle.close();

    // Locks are released right after their work, without the call waiting for it.
    await eventually(async () => ((await redis.raw.keys("layout:lock:*")).length === 0 ? true : undefined));
    expect((await redis.raw.keys("layout:*")).sort()).toEqual([
      "layout:bindings:cache",
      "layout:census",
      "layout:instance:cache",
      "layout:instance:pending-one",
      "layout:pending",
    ]);
    expect(await redis.raw.hGetAll("layout:census")).toMatchObject({ "instance:ready": "2", "instance:provisioning": "0", "binding:app": "1" });
    expect(JSON.parse((await redis.raw.get("layout:instance:cache")) ?? "")).toMatchObject({ name: "cache", state: "ready", data: { port: 1 } });
    expect(JSON.parse((await redis.raw.hGet("layout:bindings:cache", "app:web")) ?? "")).toMatchObject({ appName: "web" });
    expect(await redis.raw.sMembers("layout:pending")).toEqual(["pending-one"]);
    expect(await redis.raw.get("unrelated")).toBe("kept");

    await store.withLock("cache", 1_000, (held) => held.deleteInstance());
    await save(store, record("pending-one"));
    await eventually(async () => ((await redis.raw.keys("layout:lock:*")).length === 0 ? true : undefined));
    expect((await redis.raw.keys("layout:*")).sort()).toEqual(["layout:census", "layout:instance:pending-one"]);
  });

  it("loses nothing when the provider restarts: a new store on the same Redis sees every instance and binding", async () => {
    const handlers = { create: () => {}, destroy: () => {}, bindApp: () => ({ A: "1" }), unbindApp: () => {} };
    const before = openRegistry(handlers, { store: open("restart:") }, silent);
    await before.create(createRequest("cache", { plan: "small" }), context());
    await before.bindApp(bindAppRequest("cache", "web"), context());
    await before.close();

    const unbound: string[] = [];
    const after = openRegistry({ ...handlers, unbindApp: (request) => void unbound.push(request.appName ?? "") }, { store: open("restart:") }, silent);
    expect(await after.status({ instance: "cache" }, context())).toBe("running");
    expect((await rejection(after.create(createRequest("cache"), context()))).status).toBe(409);
    await after.unbindApp({ instance: "cache", appName: "web", appHosts: [], placement: { clusterAddresses: [] } }, context());
    expect(unbound).toEqual(["web"]);
    await after.close();
  });

  it("keeps a lock past its ttl while the work runs, so a second process waits", async () => {
    const holder = open("renew:", 300);
    const other = open("renew:", 300);
    const release = gate();
    const entered = gate();
    const held = holder.withLock("cache", 1_000, async () => {
      entered.open();
      await release.opened;
    });
    await entered.opened;
    // Well past the 300 ms ttl: only renewal keeps the lock.
    const error = await rejection(other.withLock("cache", 1_000, async () => "got it"));
    expect(error.status).toBe(503);
    release.open();
    await held;
    expect(await other.withLock("cache", 1_000, async () => "got it")).toBe("got it");
  });

  it("lets a lock whose holder died expire, and never deletes a lock it no longer holds", async () => {
    const store = open("expiry:", 300);
    // A holder that died: its token stays until the ttl passes.
    await redis.raw.set("expiry:lock:cache", "dead-process-token", { expiration: { type: "PX", value: 300 } });
    expect(await store.withLock("cache", 5_000, async () => "taken over")).toBe("taken over");
    // Released right after the work, without the call waiting for it.
    await eventually(async () => ((await redis.raw.exists("expiry:lock:cache")) === 0 ? true : undefined));

    // Work outliving its lock (here: the key vanished and someone else took it) must not free the new holder's lock.
    await store.withLock("cache", 1_000, async () => {
      await redis.raw.set("expiry:lock:cache", "someone-else");
    });
    expect(await redis.raw.get("expiry:lock:cache")).toBe("someone-else");
  });

  it("serialises the callers of one process on an instance: one at a time, every write kept, free after the last", async () => {
    const store = open("queue:");
    const other = open("queue:");
    let inside = 0;
    let most = 0;
    const lifecycle = openRegistry(
      {
        create: () => {},
        destroy: () => {},
        bindApp: async (request) => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setImmediate(resolve));
          inside -= 1;
          if (request.appName === "app-7") throw new Error("refused");
          return {};
        },
        unbindApp: () => {},
      },
      { store },
      silent,
    );
    await lifecycle.create(createRequest("cache"), context());
    const apps = Array.from({ length: 30 }, (_, i) => `app-${i}`);
    const outcomes = await Promise.allSettled(apps.map((app) => lifecycle.bindApp(bindAppRequest("cache", app), context())));
    await lifecycle.close();

    expect(most).toBe(1);
    expect(outcomes.filter((outcome) => outcome.status === "rejected")).toHaveLength(1);
    const bound = (await other.listBindings("cache")).map((binding) => binding.key);
    expect(bound.sort()).toEqual(apps.filter((app) => app !== "app-7").sort());
    // Released after the last call: another process takes it without waiting for an expiry.
    expect(await other.withLock("cache", 1_000, async ({ record }) => record?.state)).toBe("ready");
  });

  it("refuses the write of a holder whose lock was lost and taken by another: A in, B in, B wrote, A's write refused", async () => {
    const a = open("fence:");
    const b = open("fence:");
    await save(a, record("cache"));
    const bindingOf = (appHost: string) => ({ instance: "cache", kind: "app" as const, key: "web", appName: "web", appHost, createdAt: "t", updatedAt: "t" });
    const aIn = gate();
    const aWrites = gate();
    const aDone = a.withLock("cache", 1_000, async (held) => {
      aIn.open();
      await aWrites.opened;
      await held.saveBinding(bindingOf("a.example.com"));
    });
    await aIn.opened;
    await redis.raw.del("fence:lock:cache"); // what a failover that lost the lock does
    await b.withLock("cache", 1_000, (held) => held.saveBinding(bindingOf("b.example.com")));
    aWrites.open();
    const refused = await rejection(aDone);
    expect([refused.status, refused.message]).toEqual([
      503,
      'The lock on instance "cache" was lost before this call\'s change was saved (the call outlasted its time limit, or the state store lost the lock), so the change was not saved. Try again in a moment.',
    ]);
    expect((await b.getBinding("cache", "app", "web"))?.appHost).toBe("b.example.com");
    expect(await b.census()).toMatchObject({ bindings: { app: 1 } });
  });

  it("aborts the work's signal and rejects at once when a renewal finds the lock taken, and every later write is refused", async () => {
    const store = open("renewal:", 300);
    await save(store, record("cache"));
    const lost = gate<unknown>();
    const work = gate();
    const lateWrite = gate<{ write: Promise<void> }>(); // wrapped: a gate opened with a promise would adopt it
    const holding = store.withLock("cache", 1_000, async (held) => {
      held.signal.addEventListener("abort", () => lost.open(held.signal.reason));
      await redis.raw.set("renewal:lock:cache", "someone-else");
      await work.opened; // a handler that never looks at its signal
      const write = held.saveInstance(record("cache", { state: "failed" }));
      lateWrite.open({ write });
      await write;
    });
    const refused = await rejection(holding);
    expect(refused.status).toBe(503);
    expect(await lost.opened).toBe(refused);
    work.open();
    expect((await rejection((await lateWrite.opened).write)).status).toBe(503);
    expect(await redis.raw.get("renewal:lock:cache")).toBe("someone-else");
    expect((await store.getInstance("cache"))?.state).toBe("ready");
  });

  it("sends its scripts again when Redis has forgotten them (a restart, a failover, SCRIPT FLUSH)", async () => {
    const store = open("flush:");
    const lifecycle = openRegistry({ create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} }, { store }, silent);
    await lifecycle.create(createRequest("cache"), context());
    await redis.raw.scriptFlush();
    await Promise.all(["web", "api"].map((app) => lifecycle.bindApp(bindAppRequest("cache", app), context())));
    await lifecycle.close();
    expect((await store.listBindings("cache")).map((binding) => binding.key).sort()).toEqual(["api", "web"]);
    expect(await store.census()).toMatchObject({ instances: { ready: 1 }, bindings: { app: 2 } });
  });

  it("grants a step lease to one owner at a time, renews it for that owner, and frees it after the ttl", async () => {
    const store = open("lease:");
    expect(await store.acquireLease("cache", "a", 300)).toBe(true);
    expect(await store.acquireLease("cache", "b", 300)).toBe(false);
    expect(await store.acquireLease("cache", "a", 300)).toBe(true);
    await store.releaseLease("cache", "b"); // not b's to release
    expect(await store.acquireLease("cache", "b", 300)).toBe(false);
    // a stops renewing: once the ttl has passed, b gets it.
    expect(await eventually(async () => (await store.acquireLease("cache", "b", 300)) || undefined)).toBe(true);
    await store.releaseLease("cache", "b");
    expect(await redis.raw.exists("lease:lease:cache")).toBe(0);
  });

  it("fails calls with a clear 503 while Redis is unreachable, and works again once it is back", async () => {
    const gone = await startRedisServer();
    await gone.stop();
    const store = new RedisStore({ url: gone.url, keyPrefix: "down:", connectTimeoutMs: 300 });
    opened.push(store);
    const error = await rejection(store.getInstance("cache"));
    expect([error.status, error.message]).toEqual([503, "The provider cannot reach its state store (Redis) right now; try again in a moment."]);

    const back = await startRedisServer({ port: gone.port });
    try {
      await eventually(async () => (await save(store, record("cache")), true));
      expect(await store.getInstance("cache")).toMatchObject({ name: "cache" });
    } finally {
      await store.close();
      await back.stop();
    }
  });

  it("answers many calls waiting for an unreachable Redis with 503s, sharing one wait (no listener-leak warning)", async () => {
    const gone = await startRedisServer();
    await gone.stop();
    const store = new RedisStore({ url: gone.url, keyPrefix: "down:", connectTimeoutMs: 300 });
    opened.push(store);
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const errors = await Promise.all(Array.from({ length: 50 }, () => rejection(store.getInstance("cache"))));
      expect(new Set(errors.map((error) => error.status))).toEqual(new Set([503]));
      await new Promise((resolve) => setImmediate(resolve)); // warnings are emitted on the next tick
      expect(warnings.map((warning) => warning.name)).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });

  it("works with a client of the caller's, and leaves it open on close", async () => {
    const client = createClient({ url: redis.url });
    const store = new RedisStore({ client, keyPrefix: "own:" });
    await save(store, record("cache"));
    await store.close();
    expect(client.isOpen).toBe(true);
    expect(await client.exists("own:instance:cache")).toBe(1);
    await client.close();
  });
});
