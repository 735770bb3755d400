/**
 * A bind answered 503 while its write was stalled in Redis, which Redis then ran: the platform
 * believes the app unbound. Whether the platform does nothing more, or binds again, no binding it
 * does not hold stays recorded, and what the first bind made is undone. One real redis-server, a
 * `RedisStore` and a provider; the stall is `CLIENT PAUSE ... WRITE` (longer than
 * `commandTimeoutMs`), ended by the test once the 503 is in, as in stalled-create.test.ts. (A
 * MemoryStore's writes cannot stall: nothing to test there.)
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createProvider, type HandlerContext } from "provider-kit";
import { RedisStore } from "../src/index.js";
import { eventually, serve, useRawRedis } from "./helpers.js";

const APP = { "app-name": "web", "app-host": "web.example.com" };

describe("a bind answered 503 while Redis stalled its write", () => {
  const redis = useRawRedis();

  /** A provider on a fresh RedisStore whose first bind stalls Redis's writes; its log lines, and the calls its handlers got. */
  async function start() {
    const store = new RedisStore({ url: redis.url, keyPrefix: `stalled-bind-${Math.random().toString(36).slice(2)}:` });
    const logged: string[] = [];
    const log = pino({ level: "info" }, new Writable({ write: (line: Buffer, _encoding, done) => (logged.push(String((JSON.parse(String(line)) as { msg: string }).msg)), done()) }));
    const calls: Array<{ handler: string; rebound?: boolean }> = [];
    let binds = 0;
    const provider = await serve(
      createProvider(
        {
          create: () => {},
          destroy: () => {},
          async bindApp(_request, ctx: HandlerContext) {
            calls.push({ handler: "bindApp", rebound: ctx.binding !== undefined });
            // Redis stops running writes from now on: the binding's save is sent and waits there.
            if (++binds === 1) await redis.raw.sendCommand(["CLIENT", "PAUSE", "600000", "WRITE"]);
            return { TOKEN: `token-${binds}` };
          },
          unbindApp: () => void calls.push({ handler: "unbindApp" }),
        },
        { auth: false, logger: log, registry: { store, stepRetryDelayMs: 50 } },
      ),
    );
    expect((await provider.call("POST", "/resources", { name: "cache" })).status).toBe(201);
    const first = await provider.call("POST", "/resources/cache/bind-app", APP);
    expect([first.status, first.body]).toEqual([503, expect.stringMatching(/try again/i)]);
    await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
    return { store, provider, logged, calls };
  }

  it("is undone when the platform neither binds again nor unbinds: the binding goes, the unbind handler runs", async () => {
    const { store, provider, calls } = await start();
    try {
      // The write Redis held lands, marked; the bind's undo removes it once Redis runs writes again.
      await eventually(async () => (await store.listBindings("cache")).length === 0 && calls.some((call) => call.handler === "unbindApp"));
      expect(await store.listBindings("cache")).toEqual([]);
      expect(calls[0]).toEqual({ handler: "bindApp", rebound: false });
    } finally {
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      await provider.close();
      await store.close();
    }
  });

  it("is replaced by the platform's next bind, taken for a first one (201), which the undo leaves alone", async () => {
    const { store, provider, logged, calls } = await start();
    try {
      const retry = await provider.call("POST", "/resources/cache/bind-app", APP);
      expect([retry.status, JSON.parse(retry.body)]).toEqual([201, { TOKEN: "token-2" }]);
      expect(calls.filter((call) => call.handler === "bindApp")).toEqual([
        { handler: "bindApp", rebound: false },
        { handler: "bindApp", rebound: false },
      ]);
      // The undo's retries end (done, or given up: a bind the platform holds came since) with this line.
      await eventually(async () => logged.includes("undid a bind the platform was told failed"));
      const [binding, ...others] = await store.listBindings("cache");
      expect(others).toEqual([]);
      expect(binding).toMatchObject({ kind: "app", key: "web" });
      expect(binding).not.toHaveProperty("bindUnanswered");
    } finally {
      await redis.raw.sendCommand(["CLIENT", "UNPAUSE"]);
      await provider.close();
      await store.close();
    }
  });
});
