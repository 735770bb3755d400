/**
 * Removals the platform asked for are remembered (a tombstone in the store, so every replica
 * sees it): `lookup` tells an instance removed from one that never existed, which OSB's
 * `last_operation` answers 410 and 404.
 */
import { describe, expect, it } from "vitest";
import type { ProviderHandlers } from "../../src/types.js";
import { context, createRequest, eventually, rejection, STORE_KINDS, useLifecycles } from "./helpers.js";

const handlers: ProviderHandlers = {
  create: (request) => {
    if (request.plan === "broken") throw new Error("no capacity");
  },
  destroy: () => {},
  bindApp: () => ({}),
  unbindApp: () => {},
};

describe.each(STORE_KINDS)("removed instances on the %s store", (kind) => {
  const { stores, start } = useLifecycles(kind, {});

  it("are 'removed' after a destroy, unknown when never made or when the create failed, found again once re-created", async () => {
    const { lifecycle } = start(handlers);
    expect(await lifecycle.lookup("cache")).toBeUndefined();
    await rejection(lifecycle.create({ ...createRequest("cache"), plan: "broken" }, context()));
    expect(await lifecycle.lookup("cache")).toBeUndefined();
    await lifecycle.create(createRequest("cache"), context());
    await lifecycle.destroy({ instance: "cache" }, context());
    expect(await lifecycle.lookup("cache")).toBe("removed");
    await lifecycle.create(createRequest("cache"), context());
    expect(await lifecycle.lookup("cache")).toMatchObject({ name: "cache", state: "ready" });
  });

  it("are 'removed' once a background removal ends", async () => {
    const { lifecycle } = start({ ...handlers, destroy: () => ({ pending: true }), deprovision: async () => {} }, { pollIntervalMs: 20 });
    await lifecycle.create(createRequest("cache"), context());
    await lifecycle.destroy({ instance: "cache" }, context());
    await eventually(async () => (await lifecycle.lookup("cache")) === "removed");
  });

  it("are forgotten once the tombstone lapses", async () => {
    const store = stores.fresh(kind);
    await store.withLock("cache", 1_000, async (held) => {
      await held.saveInstance({ name: "cache", tags: [], parameters: {}, state: "ready", data: {}, createdAt: "", updatedAt: "" });
      await held.deleteInstance({ tombstoneMs: 50 });
    });
    expect(await store.wasRemoved("cache")).toBe(true);
    await eventually(async () => !(await store.wasRemoved("cache")));
  });
});
