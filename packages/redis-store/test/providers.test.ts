/**
 * Providers on one Redis store, over real HTTP: a lock lost to a failover saves nothing, and a
 * provider started again still knows the instances and bindings made before.
 */
import { createClient } from "@redis/client";
import { describe, expect, it } from "vitest";
import { createProvider, type ProviderHandlers } from "provider-kit";
import { RedisStore } from "../src/index.js";
import { gate, serve, silent, useStores } from "./helpers.js";

describe("providers on one Redis store", () => {
  const stores = useStores();

  it("an update whose lock was lost (a failover) and taken by the other provider saves nothing: the other's acknowledged update stays", async () => {
    const keyPrefix = "shared:";
    const raw = createClient({ url: stores.redis().url });
    await raw.connect();
    const storeA = new RedisStore({ url: stores.redis().url, keyPrefix });
    const storeB = new RedisStore({ url: stores.redis().url, keyPrefix });
    const aIn = gate();
    const aOut = gate();
    const handlersOf = (name: string): ProviderHandlers => ({
      create: () => {},
      update: async () => {
        if (name === "a") {
          aIn.open();
          await aOut.opened;
        }
        return { data: { updatedBy: name } };
      },
      destroy: () => {},
      bindApp: () => ({}),
      unbindApp: () => {},
    });
    const a = await serve(createProvider(handlersOf("a"), { auth: false, logger: silent, registry: { store: storeA } }));
    const b = await serve(createProvider(handlersOf("b"), { auth: false, logger: silent, registry: { store: storeB } }));
    try {
      expect((await a.call("POST", "/resources", { name: "cache", plan: "small" })).status).toBe(201);
      const aUpdate = a.call("PUT", "/resources/cache", { plan: "medium" });
      await aIn.opened; // A in
      await raw.del(`${keyPrefix}lock:cache`); // what a failover that lost the lock does
      expect((await b.call("PUT", "/resources/cache", { plan: "large" })).status).toBe(200); // B in, B wrote
      aOut.open(); // A writes
      const late = await aUpdate;
      expect(late.status).toBe(503);
      expect(late.body).toMatch(/^The lock on instance "cache" was lost before this call's change was saved/);
      expect(await storeB.getInstance("cache")).toMatchObject({ plan: "large", state: "ready", data: { updatedBy: "b" } });
    } finally {
      await Promise.all([a.close(), b.close()]);
      await Promise.all([storeA.close(), storeB.close(), raw.close()]);
    }
  });

  it("still knows the instances and bindings made before: unbind and destroy reach their handlers", async () => {
    const calls: string[] = [];
    const handlers: ProviderHandlers = {
      create: () => void calls.push("create"),
      destroy: () => void calls.push("destroy"),
      bindApp: () => (calls.push("bindApp"), { USER: "web" }),
      unbindApp: () => void calls.push("unbindApp"),
    };
    const serveOn = (store: ReturnType<typeof stores.fresh>) =>
      serve(createProvider(handlers, { auth: false, logger: silent, registry: { store } }));
    const app = { "app-name": "web", "app-host": "web.example.com" };
    const store = stores.fresh("redis");
    const before = await serveOn(store);
    expect((await before.call("POST", "/resources", { name: "cache" })).status).toBe(201);
    expect((await before.call("POST", "/resources/cache/bind-app", app)).status).toBe(201);
    await before.close();

    const after = await serveOn(stores.reopen(store));
    try {
      expect((await after.call("DELETE", "/resources/cache/bind-app", app)).status).toBe(200);
      expect((await after.call("DELETE", "/resources/cache")).status).toBe(200);
    } finally {
      await after.close();
    }
    expect(calls).toEqual(["create", "bindApp", "unbindApp", "destroy"]);
  });
});
