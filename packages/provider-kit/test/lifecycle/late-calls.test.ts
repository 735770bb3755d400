/**
 * The registry's one commit rule, seen the way the platform sees it (real HTTP, both stores):
 * a call records its outcome only if its answer is the one the platform got. A handler that
 * succeeds after its timeout answered 500 (inside `lockGraceMs`) is undone, each call in its
 * declared way (docs/guide/lifecycle.md), and a bind result that cannot be an environment
 * records nothing.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createProvider, declareActions, instanceAction } from "../../src/index.js";
import type { Store } from "../../src/lifecycle/store.js";
import type { BindingRecord, HandlerContext, ProviderHandlers } from "../../src/types.js";
import { eventually, gate, serve, silent, STORE_KINDS, useStores, type Served } from "./helpers.js";

/** Short, so the test is quick; the grace stays the default 10 s, far longer than the late handler needs. */
const HANDLER_TIMEOUT_MS = 300;
const TIMED_OUT = /did not finish this call within 0\.3 s/;

const actions = declareActions({
  rotate: instanceAction({ name: "rotate", method: "POST", path: "/rotate", lock: true }),
});

const WEB = { "app-name": "web", "app-host": "web.example.com" };
const UNIT = { "app-name": "web", "app-host": "web.example.com", "unit-host": "10.0.0.1" };

describe.each(STORE_KINDS)("a call that succeeds after its timeout answered 500, on the %s store", (kind) => {
  const stores = useStores();
  let served: Served[] = [];
  afterEach(async () => {
    await Promise.all(served.map((provider) => provider.close()));
    served = [];
  });

  /**
   * A provider whose handlers note their calls; the handler named `late` ignores its signal and
   * succeeds only once the test opens `finish`, after its call was answered 500.
   */
  async function start(lateCall: string, bindResult: unknown = { PASSWORD: "s3cret" }, unbindFailures = 0) {
    const late = { name: lateCall };
    let failures = unbindFailures;
    const finish = gate();
    const calls: string[] = [];
    const unbound: Array<BindingRecord | undefined> = [];
    const run = async (name: string) => {
      calls.push(name);
      if (name === late.name) await finish.opened;
    };
    const handlers: ProviderHandlers = {
      create: () => ({ data: { password: "first" } }),
      update: async () => {
        await run("update");
        return { data: { password: "updated" } };
      },
      destroy: () => run("destroy"),
      bindApp: async () => {
        await run("bindApp");
        return bindResult as Record<string, string>;
      },
      unbindApp: (_request, ctx: HandlerContext) => {
        calls.push("unbindApp");
        if (failures-- > 0) throw new Error("the resource is away");
        unbound.push(ctx.binding);
      },
      bindUnit: async () => {
        await run("bindUnit");
        return {};
      },
      unbindUnit: (_request, ctx) => {
        calls.push("unbindUnit");
        unbound.push(ctx.binding);
      },
      bindJob: async () => {
        await run("bindJob");
        return {};
      },
      unbindJob: (_request, ctx) => {
        calls.push("unbindJob");
        unbound.push(ctx.binding);
      },
      actions: actions.implement({
        rotate: async (_request, ctx) => {
          await run("rotate");
          ctx.keepData({ password: "rotated" });
          return { rotated: true };
        },
      }),
    };
    const store = stores.fresh(kind);
    const server = await serve(createProvider(handlers, { auth: false, logger: silent, handlerTimeoutMs: HANDLER_TIMEOUT_MS, registry: { store, stepRetryDelayMs: 10 } }));
    served.push(server);
    expect((await server.call("POST", "/resources", { name: "cache", plan: "small" })).status).toBe(201);
    return { ...server, store, calls, unbound, finish, late };
  }

  /** Resolves once the call holding the instance's lock (the late one, and its undo) let it go. */
  const settled = (store: Store) => store.withLock("cache", 20_000, async (held) => held.record);

  async function answeredLate(server: Served & { finish: { open: () => void }; store: Store }, method: string, path: string, form?: Record<string, string>) {
    const answer = await server.call(method, path, form);
    expect([answer.status, answer.body]).toEqual([500, expect.stringMatching(TIMED_OUT)]);
    server.finish.open();
    return settled(server.store);
  }

  it.each([
    ["bind-app", "bindApp", "unbindApp", "POST", "/resources/cache/bind-app", WEB, { kind: "app", key: "web" }],
    ["bind-unit", "bindUnit", "unbindUnit", "POST", "/resources/cache/bind", UNIT, { kind: "unit", key: "10.0.0.1" }],
    ["bind-job", "bindJob", "unbindJob", "PUT", "/resources/cache/binds/jobs/nightly", {}, { kind: "job", key: "nightly" }],
  ] as const)("a late %s is unbound by its unbind handler and leaves no binding; the platform's retry binds", async (_call, bind, unbind, method, path, form, ref) => {
    const provider = await start(bind);
    await answeredLate(provider, method, path, form);
    expect(provider.calls).toEqual([bind, unbind]);
    expect(provider.unbound).toEqual([expect.objectContaining({ instance: "cache", ...ref })]);
    expect(await provider.store.getBinding("cache", ref.kind, ref.key)).toBeUndefined();
    expect(await provider.store.listBindings("cache")).toEqual([]);
    // The platform retries the bind it saw fail: answered, recorded, and not undone.
    expect((await provider.call(method, path, form)).status).toBe(201);
    expect(await provider.store.getBinding("cache", ref.kind, ref.key)).toMatchObject(ref);
  });

  it("a late bind whose unbind fails is unbound by a retry in the background", async () => {
    const provider = await start("bindApp", undefined, 2);
    await answeredLate(provider, "POST", "/resources/cache/bind-app", WEB);
    await eventually(() => provider.unbound.length === 1);
    expect(provider.calls).toEqual(["bindApp", "unbindApp", "unbindApp", "unbindApp"]);
    await settled(provider.store); // the retry's lock let go, its delete made
    expect(await provider.store.listBindings("cache")).toEqual([]);
  });

  it("a late re-bind of an app already bound is unbound too, and its binding forgotten: the platform believes the app unbound", async () => {
    const provider = await start("none");
    expect((await provider.call("POST", "/resources/cache/bind-app", WEB)).status).toBe(201);
    provider.late.name = "bindApp";
    await answeredLate(provider, "POST", "/resources/cache/bind-app", WEB);
    expect(provider.calls).toEqual(["bindApp", "bindApp", "unbindApp"]);
    expect(await provider.store.listBindings("cache")).toEqual([]);
  });

  it("a late update leaves the record as the platform knows it: the old plan, the old data, ready", async () => {
    const provider = await start("update");
    const record = await answeredLate(provider, "PUT", "/resources/cache", { plan: "large" });
    expect(provider.calls).toEqual(["update"]);
    expect(record).toMatchObject({ plan: "small", state: "ready", data: { password: "first" } });
  });

  it("a late locked action's kept data is dropped", async () => {
    const provider = await start("rotate");
    const record = await answeredLate(provider, "POST", "/resources/cache/rotate");
    expect(provider.calls).toEqual(["rotate"]);
    expect(record).toMatchObject({ state: "ready", data: { password: "first" } });
  });

  it("a late destroy keeps the record, and the platform's retry runs destroy again", async () => {
    const provider = await start("destroy");
    const record = await answeredLate(provider, "DELETE", "/resources/cache");
    expect(record).toMatchObject({ name: "cache", state: "ready" });
    expect((await provider.call("GET", "/resources/cache/status")).status).toBe(204);
    expect((await provider.call("DELETE", "/resources/cache")).status).toBe(200);
    expect(provider.calls).toEqual(["destroy", "destroy"]);
    expect(await provider.store.getInstance("cache")).toBeUndefined();
  });

  it.each([
    ["a number", 42],
    ["a list", ["PASSWORD"]],
    ["an object for a variable", { PASSWORD: { nested: true } }],
  ])("a bind handler returning %s answers 500, records no binding, and is unbound", async (_what, result) => {
    const provider = await start("none", result);
    const answer = await provider.call("POST", "/resources/cache/bind-app", WEB);
    expect(answer.status).toBe(500);
    expect(await provider.store.listBindings("cache")).toEqual([]);
    // Undone before the 500 was sent, under the instance lock the bind held.
    expect(provider.calls).toEqual(["bindApp", "unbindApp"]);
  });
});
