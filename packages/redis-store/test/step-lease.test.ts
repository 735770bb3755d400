/** A background step on a RedisStore whose lease can no longer be renewed is stopped. */
import { describe, expect, it } from "vitest";
import { openRegistry } from "provider-kit/store";
import { RedisStore } from "../src/index.js";
import { startRedisServer } from "../../../test/support/redis-server.js";
import { context, createRequest, gate, silent } from "./helpers.js";

describe("a background step whose lease cannot be renewed", () => {
  it("is stopped (its signal aborts) once the lease can no longer be proven, e.g. with its Redis gone", async () => {
    const redis = await startRedisServer();
    // Timeouts sized for a loaded machine: the step is stopped by its lease's deadline, not by them.
    const store = new RedisStore({ url: redis.url, keyPrefix: "lease-lost:", connectTimeoutMs: 5_000, commandTimeoutMs: 5_000 });
    const started = gate();
    const stopped = gate<unknown>();
    const lifecycle = openRegistry(
      {
        create: () => ({ pending: true }),
        provision: async (_record, { signal }) => {
          signal.addEventListener("abort", () => stopped.open(signal.reason));
          started.open();
          await new Promise(() => {}); // still working when the lease lapses
        },
        destroy: () => {},
        bindApp: () => ({}),
        unbindApp: () => {},
      },
      // A lease that lapses soon after its renewals stop.
      { leaseTtlMs: 600, store },
      silent,
    );
    try {
      await lifecycle.create(createRequest("cache"), context());
      await started.opened;
      await redis.stop(); // renewals fail from now on
      expect(String(await stopped.opened)).toMatch(/lease was taken over or could not be renewed in time/);
    } finally {
      await lifecycle.close();
      await store.close();
      await redis.stop();
    }
  });
});
