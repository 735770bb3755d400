/**
 * The census a RedisStore keeps: right for a store an older version wrote, after a process died
 * between two steps of a call, and with two processes binding at once.
 */
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InstanceRecord, ProviderHandlers } from "provider-kit";
import { openRegistry } from "provider-kit/store";
import { RedisStore } from "../src/index.js";
import { bindAppRequest, context, counted, createRequest, silent, useStores } from "../../../test/support/stores.js";

const handlers: ProviderHandlers = { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} };

describe("census of a RedisStore", () => {
  const stores = useStores();
  let raw: ReturnType<typeof createClient>;
  beforeAll(async () => {
    raw = createClient({ url: stores.redis().url });
    await raw.connect();
  });
  afterAll(async () => {
    await raw.close();
  });

  const record = (name: string, state: InstanceRecord["state"]): InstanceRecord => ({
    name,
    tags: [],
    parameters: {},
    state,
    data: {},
    createdAt: "2026-01-01T00:00:00.000Z",
    updatedAt: "2026-01-01T00:00:00.000Z",
  });

  it("counts a store written by a version without a census once, then keeps the counts with the writes", async () => {
    // What an older version left: records and bindings, no census key.
    await raw.set("old:instance:cache", JSON.stringify(record("cache", "ready")));
    await raw.set("old:instance:queue", JSON.stringify(record("queue", "provisioning")));
    await raw.hSet("old:bindings:cache", { "app:web": "{}", "app:api": "{}", "unit:10.0.0.1": "{}" });
    const store = new RedisStore({ url: stores.redis().url, keyPrefix: "old:" });
    try {
      expect(await store.census()).toEqual(counted({ ready: 1, provisioning: 1 }, { app: 2, unit: 1 }));
      await store.withLock("cache", 5_000, (held) => held.deleteBinding({ kind: "app", key: "api" }));
      await store.withLock("queue", 5_000, (held) => held.saveInstance(record("queue", "ready")));
      expect(await store.census()).toEqual(counted({ ready: 2 }, { app: 1, unit: 1 }));
      // Operators reset a census they distrust (after a rolling upgrade from an older version) by deleting it.
      await raw.del("old:census");
      expect(await store.census()).toEqual(counted({ ready: 2 }, { app: 1, unit: 1 }));
    } finally {
      await store.close();
    }
  });

  it("stays right when a process dies between the steps of a create, and another replaces it", async () => {
    const url = stores.redis().url;
    // The first process wrote the provisioning record, then died before the handler answered.
    const crashed = new RedisStore({ url, keyPrefix: "crash:" });
    await crashed.withLock("cache", 5_000, (held) => held.saveInstance(record("cache", "provisioning")));
    await crashed.close();

    const store = new RedisStore({ url, keyPrefix: "crash:" });
    const lifecycle = openRegistry(handlers, { store }, silent);
    try {
      expect(await store.census()).toEqual(counted({ provisioning: 1 }, {}));
      await lifecycle.create(createRequest("cache"), context());
      expect(await store.census()).toEqual(counted({ ready: 1 }, {}));
    } finally {
      await lifecycle.close();
      await store.close();
    }
  });

  it("serialises binds of two processes on one instance: every binding counted once", async () => {
    const url = stores.redis().url;
    const one = new RedisStore({ url, keyPrefix: "two:" });
    const other = new RedisStore({ url, keyPrefix: "two:" });
    const seen: number[] = [];
    let inside = 0;
    const slowBind = async () => {
      inside += 1;
      seen.push(inside);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inside -= 1;
      return {};
    };
    const first = openRegistry({ ...handlers, bindApp: slowBind }, { store: one }, silent);
    const second = openRegistry({ ...handlers, bindApp: slowBind }, { store: other }, silent);
    try {
      await first.create(createRequest("cache"), context());
      const apps = Array.from({ length: 20 }, (_, i) => `app-${i}`);
      await Promise.all(apps.map((app, i) => (i % 2 === 0 ? first : second).bindApp(bindAppRequest("cache", app), context())));
      expect(Math.max(...seen)).toBe(1); // never two bind handlers of one instance at once
      expect(await other.census()).toEqual(counted({ ready: 1 }, { app: 20 }));
      expect((await one.listBindings("cache")).map((binding) => binding.key).sort()).toEqual([...apps].sort());
    } finally {
      await Promise.all([first.close(), second.close()]);
      await Promise.all([one.close(), other.close()]);
    }
  });
});
