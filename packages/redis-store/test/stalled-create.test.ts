/**
 * A create answered 503 while its last write was stalled in Redis, which Redis then ran: the
 * platform got no instance, so its retry of the name must create it (201), never find it taken
 * (409). One real redis-server, a `RedisStore` and a provider with default settings; the stall
 * is `CLIENT PAUSE ... WRITE`, ended by the test once the 503 is in (longer than
 * `commandTimeoutMs`, shorter than the lock's ttl, as in the 7 s stall).
 */
import { describe, expect, it } from "vitest";
import { RedisStore } from "../src/index.js";
import { createProvider } from "provider-kit";
import { eventually, serve, silent, useRawRedis } from "./helpers.js";

describe("a create answered 503 while Redis stalled its last write", () => {
  const redis = useRawRedis();


  it("is created by the platform's retry of the name (201), whatever Redis did with the write after the 503", async () => {
    const store = new RedisStore({ url: redis.url });
    let creates = 0;
    const provider = await serve(
      createProvider(
        {
          async create() {
            // Redis stops running writes (scripts included) from now on: the save this create
            // makes next is sent and waits in Redis.
            if (++creates === 1) await redis.raw.sendCommand(["CLIENT", "PAUSE", "600000", "WRITE"]);
            return { data: { attempt: creates } };
          },
          destroy: () => {},
          bindApp: () => ({}),
          unbindApp: () => {},
        },
        { auth: false, logger: silent, registry: { store } },
      ),
    );
    try {
      const first = await provider.call("POST", "/resources", { name: "cache" });
      expect([first.status, first.body]).toEqual([503, expect.stringMatching(/try again/i)]);
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      // Redis runs the save it held: the record lands ready.
      await eventually(async () => (await store.getInstance("cache"))?.state === "ready");

      const retry = await provider.call("POST", "/resources", { name: "cache" });
      expect(retry.status).toBe(201);
      expect(creates).toBe(2);
      expect(await store.getInstance("cache")).toMatchObject({ state: "ready", data: { attempt: 2 } });
      expect((await provider.call("GET", "/resources/cache/status")).status).toBe(204);
      // A create of a name the platform was answered 201 for stays refused.
      expect((await provider.call("POST", "/resources", { name: "cache" })).status).toBe(409);
    } finally {
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      await provider.close();
      await store.close();
    }
  });
});
