/**
 * The census behind the metrics' instance and binding gauges: kept by the writes themselves
 * (no walk at a scrape), right through every call, on each store. (The RedisStore's own cases:
 * packages/redis-store/test/census.test.ts.)
 */
import { describe, expect, it } from "vitest";
import type { ProviderHandlers } from "../../src/types.js";
import {
  bindAppRequest,
  context,
  counted,
  createRequest,
  eventually,
  rejection,
  STORE_KINDS,
  unbindAppRequest,
  useLifecycles,
} from "./helpers.js";

const handlers: ProviderHandlers = {
  create: () => {},
  destroy: () => {},
  bindApp: () => ({}),
  unbindApp: () => {},
  bindUnit: () => ({}),
  unbindUnit: () => {},
  bindJob: () => ({}),
  unbindJob: () => {},
};

describe.each(STORE_KINDS)("census on the %s store", (kind) => {
  const { start } = useLifecycles(kind, {});

  it("follows create, bind, rebind, unbind, a failed bind and destroy", async () => {
    const { lifecycle, store } = start({ ...handlers, bindJob: () => Promise.reject(new Error("job refused")) });
    expect(await store.census?.()).toEqual(counted({}, {}));

    await lifecycle.create(createRequest("cache"), context());
    await lifecycle.create(createRequest("queue"), context());
    await lifecycle.bindApp(bindAppRequest("cache", "web"), context());
    await lifecycle.bindApp(bindAppRequest("cache", "web"), context()); // the same binding again: still one
    await lifecycle.bindApp(bindAppRequest("cache", "api"), context());
    await lifecycle.bindUnit({ instance: "cache", appName: "web", appHost: "web.example.com", unitHost: "10.0.0.1" }, context());
    await lifecycle.bindApp(bindAppRequest("queue", "web"), context());
    await rejection(lifecycle.bindJob({ instance: "queue", jobName: "nightly", parameters: {}, placement: { clusterAddresses: [] } }, context()));
    expect(await store.census?.()).toEqual(counted({ ready: 2 }, { app: 3, unit: 1 }));

    await lifecycle.unbindApp(unbindAppRequest("cache", "api"), context());
    await lifecycle.unbindApp(unbindAppRequest("cache", "api"), context()); // already gone: nothing to count down
    expect(await store.census?.()).toEqual(counted({ ready: 2 }, { app: 2, unit: 1 }));

    await lifecycle.destroy({ instance: "cache" }, context());
    expect(await store.census?.()).toEqual(counted({ ready: 1 }, { app: 1 }));
  });

  it("counts an instance once per state as it moves through provisioning, deleting and failed", async () => {
    const { lifecycle, store } = start(
      {
        ...handlers,
        create: () => ({ pending: true }),
        provision: () => Promise.reject(new Error("no capacity")),
      },
      { maxStepAttempts: 1, pollIntervalMs: 60_000 },
    );
    await lifecycle.create(createRequest("cache"), context());
    // The one attempt fails, so the instance ends failed.
    await eventually(async () => ((await lifecycle.status({ instance: "cache" }, context())) === "pending" ? undefined : true));
    expect(await store.census?.()).toEqual(counted({ failed: 1 }, {}));
  });
});
