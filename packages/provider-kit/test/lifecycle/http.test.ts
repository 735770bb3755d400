/**
 * The registry seen the way the platform sees it: real HTTP calls to `createProvider`,
 * on the in-memory store and on a real redis-server. (Two providers on one Redis:
 * packages/redis-store/test/providers.test.ts.)
 */
import { afterEach, describe, expect, it } from "vitest";
import { UNPRINTED } from "../../../../test/support/unprinted.js";
import { ProviderError } from "../../src/errors.js";
import { MemoryStore } from "../../src/lifecycle/memory-store.js";
import { type ProviderOptions } from "../../src/options.js";
import { ConfigurationError } from "../../src/errors.js";
import type { RegistryOptions } from "../../src/lifecycle/registry.js";
import { createProvider } from "../../src/provider.js";
import type { ProviderHandlers } from "../../src/types.js";
import { eventually, gate, serve, silent, STORE_KINDS, useStores, type Served } from "./helpers.js";

describe("choosing where the registry keeps its state", () => {
  const handlers: ProviderHandlers = { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} };
  const optionsWith = (registry: unknown) => ({ auth: false, logger: silent, registry }) as Parameters<typeof createProvider>[1];

  it.each([
    ["no registry option", undefined, /no instance registry configured/],
    ["a registry without a store", { lockTimeoutMs: 1_000 }, /registry\.store is missing/],
  ])("refuses to start with %s, naming the store for production, the one for trials and registry: false", (_what, registry, problem) => {
    const attempt = () => createProvider(handlers, optionsWith(registry));
    expect(attempt).toThrow(ConfigurationError);
    expect(attempt).toThrow(problem);
    expect(attempt).toThrow(/registry: \{ store: new RedisStore\(.*\) \} in production.*registry: \{ store: new MemoryStore\(\) \} for tests.*registry: false/);
  });

  it("starts with a store chosen, or with registry: false", async () => {
    for (const registry of [{ store: new MemoryStore() }, false]) {
      const provider = createProvider(handlers, optionsWith(registry));
      await provider.close();
    }
  });
});

describe.each(STORE_KINDS)("registry over HTTP on the %s store", (kind) => {
  const stores = useStores();
  let served: Served[] = [];
  afterEach(async () => {
    await Promise.all(served.map((provider) => provider.close()));
    served = [];
  });

  async function start(handlers: ProviderHandlers, options: Partial<RegistryOptions> = {}, providerOptions: Partial<ProviderOptions> = {}) {
    const store = stores.fresh(kind);
    const provider = createProvider(handlers, {
      auth: false,
      logger: silent,
      ...providerOptions,
      registry: { stepRetryDelayMs: 10, pollIntervalMs: 50, ...options, store },
    });
    const server = await serve(provider);
    served.push(server);
    return { ...server, store };
  }

  it("async provisioning: 201 at once, status 202 and bind 412 until ready, then 204 and 201", async () => {
    const finish = gate();
    let bindCalls = 0;
    let unbindCalls = 0;
    const { call, store } = await start({
      create: () => ({ pending: true }),
      provision: async () => {
        await finish.opened;
        return { data: { password: "generated" } };
      },
      destroy: () => {},
      bindApp: (_request, ctx) => {
        bindCalls++;
        return { REDIS_PASSWORD: ctx.record?.data.password as string, REBOUND: String(ctx.binding !== undefined) };
      },
      unbindApp: () => void unbindCalls++,
    });

    expect((await call("POST", "/resources", { name: "cache", team: "core", plan: "small" })).status).toBe(201);
    expect((await call("GET", "/resources/cache/status")).status).toBe(202);
    const early = await call("POST", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect(early.status).toBe(412);
    expect(early.body).toBe('Instance "cache" is still being provisioned; try again in a moment.');
    expect(bindCalls).toBe(0);

    finish.open();
    await eventually(async () => ((await call("GET", "/resources/cache/status")).status === 204 ? true : undefined));
    const bound = await call("POST", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect(bound.status).toBe(201);
    expect(JSON.parse(bound.body)).toEqual({ REDIS_PASSWORD: "generated", REBOUND: "false" });
    const again = await call("POST", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect([again.status, JSON.parse(again.body)]).toEqual([201, { REDIS_PASSWORD: "generated", REBOUND: "true" }]);

    expect((await call("DELETE", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" })).status).toBe(200);
    expect((await call("DELETE", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" })).status).toBe(200);
    expect(unbindCalls).toBe(1);
    expect(await store.listBindings("cache")).toEqual([]);

    expect((await call("DELETE", "/resources/cache")).status).toBe(200);
    expect((await call("GET", "/resources/cache/status")).status).toBe(404);
  });

  it("a step's progress: the status answer carries its latest message as text while pending, and the store keeps it", async () => {
    const restored = gate();
    const finish = gate();
    const removing = gate();
    const { call, store, url } = await start({
      create: () => ({ pending: true }),
      provision: async (_record, ctx) => {
        await ctx.progress("restoring snapshot, 40%");
        restored.open();
        await finish.opened;
      },
      destroy: () => ({ pending: true }),
      deprovision: async (_record, ctx) => {
        await ctx.progress("dropping keys");
        await removing.opened;
      },
      bindApp: () => ({}),
      unbindApp: () => {},
    });

    expect((await call("POST", "/resources", { name: "cache" })).status).toBe(201);
    await restored.opened;
    const pending = await fetch(`${url}/resources/cache/status`);
    expect([pending.status, pending.headers.get("content-type"), await pending.text()]).toEqual([202, "text/plain; charset=utf-8", "restoring snapshot, 40%"]);
    // Kept on the record: another handle on the same data (a restarted process) reads it.
    expect((await stores.reopen(store).getInstance("cache"))?.step?.progress).toBe("restoring snapshot, 40%");

    finish.open();
    await eventually(async () => ((await call("GET", "/resources/cache/status")).status === 204 ? true : undefined));
    expect((await store.getInstance("cache"))?.step).toBeUndefined();

    expect((await call("DELETE", "/resources/cache")).status).toBe(200);
    const removal = await eventually(async () => {
      const answer = await call("GET", "/resources/cache/status");
      return answer.body.endsWith("dropping keys") ? answer : undefined;
    });
    expect(removal).toEqual({ status: 500, body: "The instance is being removed: dropping keys" });
    removing.open();
    await eventually(async () => ((await call("GET", "/resources/cache/status")).status === 404 ? true : undefined));
  });

  it("makes a provider's progress, failure reason and status text printable before any status answer shows it, one line of at most 200 characters", async () => {
    const reported = gate();
    const finish = gate();
    const hostile = `\u001b[2Jcleared\u0007 \u009b31m \u202Eevil\u202C zero\u200Bwidth\uFEFF\r\nnext ${"x".repeat(300)}`;
    const { call, store } = await start({
      create: () => ({ pending: true }),
      provision: async (record, ctx) => {
        if (record.name === "broken") throw new ProviderError(hostile);
        await ctx.progress(hostile);
        reported.open();
        await finish.opened;
      },
      destroy: () => {},
      bindApp: () => ({}),
      unbindApp: () => {},
      status: () => ({ message: hostile }),
    }, { maxStepAttempts: 1 });

    expect((await call("POST", "/resources", { name: "cache" })).status).toBe(201);
    await reported.opened;
    const pending = await call("GET", "/resources/cache/status");
    expect(pending.status).toBe(202);
    expect(pending.body).not.toMatch(UNPRINTED);
    expect(pending.body.startsWith("\\u001b[2Jcleared\\u0007 \\u009b31m \\u202eevil\\u202c zero\\u200bwidth\\ufeff next x")).toBe(true);
    expect(pending.body.length).toBe(200);
    expect((await store.getInstance("cache"))?.step?.progress).toBe(pending.body);
    finish.open();
    await eventually(async () => ((await call("GET", "/resources/cache/status")).status === 200 ? true : undefined));

    // The status handler's own text.
    const ready = await call("GET", "/resources/cache/status");
    expect(ready.body).not.toMatch(UNPRINTED);
    expect(ready.body.length).toBe(200);

    // A failure's reason (a ProviderError's message) is kept printable too.
    expect((await call("POST", "/resources", { name: "broken" })).status).toBe(201);
    const failed = await eventually(async () => ((await store.getInstance("broken"))?.state === "failed" ? call("GET", "/resources/broken/status") : undefined));
    expect(failed.status).toBe(500);
    expect(failed.body).toMatch(/^Provisioning failed after 1 attempt\(s\): \\u001b\[2Jcleared/);
    expect(failed.body).not.toMatch(UNPRINTED);
    expect((await store.getInstance("broken"))?.reason).not.toMatch(UNPRINTED);
  });

  it("answers 404 for an unknown instance on every instance route and 409 for an existing name", async () => {
    const { call } = await start({
      create: () => {},
      destroy: () => {},
      bindApp: () => ({}),
      unbindApp: () => {},
      update: () => {},
      bindUnit: () => ({}),
      unbindUnit: () => {},
      bindJob: () => ({}),
      unbindJob: () => {},
      info: () => [],
    });
    const app = { "app-name": "web", "app-host": "web.example.com" };
    const unit = { ...app, "unit-host": "10.0.0.1" };
    const routes: Array<[string, string, Record<string, string>?]> = [
      ["PUT", "/resources/ghost", { team: "core" }],
      ["DELETE", "/resources/ghost"],
      ["POST", "/resources/ghost/bind-app", app],
      ["DELETE", "/resources/ghost/bind-app", app],
      ["POST", "/resources/ghost/bind", unit],
      ["DELETE", "/resources/ghost/bind", unit],
      ["PUT", "/resources/ghost/binds/jobs/nightly"],
      ["DELETE", "/resources/ghost/binds/jobs/nightly"],
      ["GET", "/resources/ghost/status"],
      ["GET", "/resources/ghost"],
      ["POST", "/resources/ghost", { hostname: "web.example.com" }],
      ["DELETE", "/resources/ghost/hostname/web.example.com"],
    ];
    for (const [method, path, form] of routes) {
      const answer = await call(method, path, form);
      expect([method, path, answer.status, answer.body]).toEqual([method, path, 404, 'Instance "ghost" not found.']);
    }
    expect((await call("POST", "/resources", { name: "cache" })).status).toBe(201);
    const duplicate = await call("POST", "/resources", { name: "cache" });
    expect([duplicate.status, duplicate.body]).toEqual([409, 'An instance named "cache" already exists.']);
  });

  it("reports a failed provisioning: status 500 with the reason, bind 500, destroy still works", async () => {
    const { call } = await start(
      {
        create: () => ({ pending: true }),
        provision: () => {
          throw new ProviderError("No free port left on the host.");
        },
        destroy: () => {},
        bindApp: () => ({}),
        unbindApp: () => {},
      },
      { maxStepAttempts: 2 },
    );
    expect((await call("POST", "/resources", { name: "cache" })).status).toBe(201);
    const reason = "Provisioning failed after 2 attempt(s): No free port left on the host.";
    const status = await eventually(async () => {
      const answer = await call("GET", "/resources/cache/status");
      return answer.status === 500 ? answer : undefined;
    });
    expect(status.body).toBe(reason);
    const bind = await call("POST", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect([bind.status, bind.body]).toEqual([500, `Instance "cache" failed: ${reason}. Remove it and create it again.`]);
    expect((await call("DELETE", "/resources/cache")).status).toBe(200);
    expect((await call("GET", "/resources/cache/status")).status).toBe(404);
  });

  it("binds and unbinds by hostname on Variant B routes", async () => {
    const hosts: string[] = [];
    const { call, store } = await start({
      create: () => {},
      destroy: () => {},
      bindApp: (request) => ({ HOST: request.appHost ?? "" }),
      unbindApp: (request) => void hosts.push(request.appHost ?? ""),
    });
    await call("POST", "/resources", { name: "cache" });
    const bound = await call("POST", "/resources/cache", { hostname: "web.example.com" });
    expect([bound.status, JSON.parse(bound.body)]).toEqual([201, { HOST: "web.example.com" }]);
    expect(await store.getBinding("cache", "app", "web.example.com")).toBeDefined();
    expect((await call("DELETE", "/resources/cache/hostname/web.example.com")).status).toBe(200);
    expect((await call("DELETE", "/resources/cache/hostname/web.example.com")).status).toBe(200);
    expect(hosts).toEqual(["web.example.com"]);
  });

  it("concurrent creates of one name: one 201, the rest 409", async () => {
    const { call } = await start({
      create: async () => {
        await new Promise((resolve) => setTimeout(resolve, 20));
      },
      destroy: () => {},
      bindApp: () => ({}),
      unbindApp: () => {},
    });
    const answers = await Promise.all(Array.from({ length: 10 }, () => call("POST", "/resources", { name: "race" })));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([201, ...Array<number>(9).fill(409)]);
  });

  it("a bind whose handler timeout passes while it waits for the instance lock is answered 503 (another call is running) and never runs", async () => {
    const held = gate();
    const entered = gate();
    const bound: string[] = [];
    const handlers: ProviderHandlers = {
      create: () => {},
      destroy: () => {},
      bindApp: async (request) => {
        bound.push(request.appName ?? "");
        entered.open();
        await held.opened;
        return {};
      },
      unbindApp: () => {},
    };
    const store = stores.fresh(kind);
    const provider = createProvider(handlers, { auth: false, logger: silent, handlerTimeoutMs: 300, registry: { store } });
    const server = await serve(provider);
    served.push(server);
    await server.call("POST", "/resources", { name: "cache" });
    const first = server.call("POST", "/resources/cache/bind-app", { "app-name": "first", "app-host": "first.example.com" });
    await entered.opened;
    const late = await server.call("POST", "/resources/cache/bind-app", { "app-name": "late", "app-host": "late.example.com" });
    // Held up by the first call, not by its own handler: 503, which the platform may retry.
    expect([late.status, late.body]).toEqual([503, 'Another operation on instance "cache" is still running; try again in a moment.']);
    held.open();
    expect((await first).status).toBe(500); // the first one outlived its timeout too
    // The late call got the lock once the first released it, and was dropped there.
    await eventually(async () => (await store.withLock("cache", 1_000, async () => true)) || undefined);
    expect(bound).toEqual(["first"]);
    expect((await store.listBindings("cache")).map((binding) => binding.key)).not.toContain("late");
  });

  it("a create that succeeds after its handler timeout answered 500 is undone, and the platform's retry of that name creates it", async () => {
    const slowFirst = gate();
    const calls: string[] = [];
    let creates = 0;
    const { call } = await start(
      {
        create: async () => {
          const attempt = ++creates;
          calls.push(`create ${attempt}`);
          if (attempt === 1) await slowFirst.opened; // ignores its signal, then succeeds
          return { data: { attempt } };
        },
        destroy: (_request, ctx) => void calls.push(`destroy ${JSON.stringify(ctx.record?.data.attempt)}`),
        bindApp: () => ({}),
        unbindApp: () => {},
      },
      {},
      { handlerTimeoutMs: 300 },
    );
    const failed = await call("POST", "/resources", { name: "cache" });
    expect([failed.status, failed.body]).toEqual([500, expect.stringMatching(/did not finish this call within 0\.3 s/)]);
    slowFirst.open();
    // The platform was told the create failed: what the handler made is removed in the background.
    await eventually(async () => ((await call("GET", "/resources/cache/status")).status === 404 ? true : undefined));
    expect(calls).toEqual(["create 1", "destroy 1"]);
    expect((await call("POST", "/resources", { name: "cache" })).status).toBe(201);
    expect((await call("GET", "/resources/cache/status")).status).toBe(204);
    expect(calls).toEqual(["create 1", "destroy 1", "create 2"]);
  });

  /** A provider whose bind-app handler ignores its signal and returns only when the test says. */
  async function startWithHangingBind(release: Promise<void>) {
    const calls: string[] = [];
    const handlers: ProviderHandlers = {
      create: () => {},
      destroy: () => void calls.push("destroy"),
      bindApp: async () => {
        calls.push("bindApp");
        await release;
        return { USER: "web" };
      },
      unbindApp: () => {},
    };
    const store = stores.fresh(kind);
    const provider = createProvider(handlers, {
      auth: false,
      logger: silent,
      // The grace well inside the handler timeout: a call made right after the hung one's 500 has
      // time left to run once that lock is let go.
      handlerTimeoutMs: 1_000,
      registry: { store, lockGraceMs: 100, lockTimeoutMs: 10_000 },
    });
    const server = await serve(provider);
    served.push(server);
    expect((await server.call("POST", "/resources", { name: "cache" })).status).toBe(201);
    const bind = await server.call("POST", "/resources/cache/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect([bind.status, bind.body]).toEqual([500, expect.stringMatching(/did not finish this call within 1 s/)]);
    return { provider, server, store, calls };
  }

  it("a handler that never settles holds its instance only until its deadline plus the grace: destroy then reaches its handler", async () => {
    const release = gate();
    const { server, calls } = await startWithHangingBind(release.opened);
    const destroy = await server.call("DELETE", "/resources/cache");
    expect(destroy.status).toBe(200);
    expect(calls).toEqual(["bindApp", "destroy"]);
    expect((await server.call("GET", "/resources/cache/status")).status).toBe(404);
    release.open();
  });

  it("close() waits for a handler past its deadline until its lock is let go; what the handler saves afterwards is refused", async () => {
    const release = gate();
    const { provider, store } = await startWithHangingBind(release.opened);
    await provider.close();
    release.open(); // the handler returns only now, after close()
    // Queued behind the hung call if it still held the lock; reads what it saved.
    const binding = await store.withLock("cache", 5_000, async (held) => held.binding, { binding: { kind: "app", key: "web" } });
    expect(binding).toBeUndefined();
  });

  it("concurrent binds of many apps to one instance: every one answered 201 and recorded", async () => {
    const { call, store } = await start({
      create: () => {},
      destroy: () => {},
      bindApp: (request) => ({ USER: request.appName ?? "" }),
      unbindApp: () => {},
    });
    await call("POST", "/resources", { name: "cache" });
    const apps = Array.from({ length: 25 }, (_, i) => `app-${i}`);
    const answers = await Promise.all(
      apps.map((app) => call("POST", "/resources/cache/bind-app", { "app-name": app, "app-host": `${app}.example.com` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(apps.map(() => 201));
    expect((await store.listBindings("cache")).map((binding) => binding.appName).sort()).toEqual([...apps].sort());
  });
});
