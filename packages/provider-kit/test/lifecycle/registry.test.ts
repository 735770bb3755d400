/**
 * The registry lifecycle called directly (no HTTP): every state, transition and automatic
 * answer, on the in-memory store and on a real redis-server.
 */
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import { MemoryStore } from "../../src/lifecycle/memory-store.js";
import { registryLifecycle } from "../../src/lifecycle/registry.js";
import type { BindingRecord, HandlerContext, InstanceRecord, ProviderHandlers } from "../../src/types.js";
import {
  bindAppRequest,
  context,
  createRequest,
  eventually,
  gate,
  rejection,
  silent,
  steps,
  STORE_KINDS,
  unbindAppRequest,
  useLifecycles,
} from "./helpers.js";

/** Handlers that do nothing but remember what they were given. */
function recordingHandlers(overrides: Partial<ProviderHandlers> = {}) {
  const calls: Array<{ handler: string; record?: InstanceRecord; binding?: BindingRecord }> = [];
  const seen = (handler: string) => (_request: unknown, ctx: HandlerContext) => {
    calls.push({ handler, record: ctx.record, binding: ctx.binding });
  };
  const handlers: ProviderHandlers = {
    create: (request, ctx) => void seen("create")(request, ctx),
    destroy: (request, ctx) => void seen("destroy")(request, ctx),
    bindApp: (request, ctx) => {
      seen("bindApp")(request, ctx);
      return { APP: request.appName ?? request.appHost ?? "" };
    },
    unbindApp: (request, ctx) => seen("unbindApp")(request, ctx),
    bindUnit: (request, ctx) => void seen("bindUnit")(request, ctx),
    unbindUnit: (request, ctx) => seen("unbindUnit")(request, ctx),
    bindJob: (request, ctx) => {
      seen("bindJob")(request, ctx);
      return { JOB: request.jobName };
    },
    unbindJob: (request, ctx) => seen("unbindJob")(request, ctx),
    ...overrides,
  };
  const callsOf = (handler: string) => calls.filter((call) => call.handler === handler);
  return { handlers, calls, callsOf };
}

describe("registry options", () => {
  it.each([
    [{ maxStepAttempts: 0 }, "registry.maxStepAttempts must be a positive number, got 0."],
    [{ maxStepAttempts: 2.5 }, "registry.maxStepAttempts must be a whole number, got 2.5."],
    [{ stepRetryBackoff: 0.5 }, "registry.stepRetryBackoff must be a number of at least 1, got 0.5."],
    [{ lockTimeoutMs: -1 }, "registry.lockTimeoutMs must be a positive number, got -1."],
  ])("refuses %o at start-up", (options, message) => {
    const { handlers } = recordingHandlers();
    expect(() => registryLifecycle(handlers, { ...options, store: new MemoryStore() }, silent, steps)).toThrow(message);
  });
});

describe.each(STORE_KINDS)("registry lifecycle on the %s store", (kind) => {
  const { start, stores } = useLifecycles(kind, { stepRetryDelayMs: 10, pollIntervalMs: 50 });

  const ctx = context();

  describe("the instance lock", () => {
    const ready: InstanceRecord = { name: "cache", tags: [], parameters: {}, state: "ready", data: {}, createdAt: "t", updatedAt: "t" };

    it("is let go at holdUntil while the work still runs: its signal aborts, 503 at once, the next caller goes ahead, the late write is refused", async () => {
      const store = stores.fresh(kind);
      await store.withLock("cache", 1_000, (held) => held.saveInstance(ready));
      const aborted = gate();
      const work = gate();
      const lateWrite = gate<{ write: Promise<void> }>(); // wrapped: a gate opened with a promise would adopt it
      const holding = store.withLock(
        "cache",
        1_000,
        async (held) => {
          held.signal.addEventListener("abort", () => aborted.open());
          await work.opened; // a handler that never looks at its signal
          const write = held.saveInstance({ ...ready, state: "failed" });
          lateWrite.open({ write });
          await write;
        },
        { holdUntil: Date.now() + 100 },
      );
      const refused = await rejection(holding);
      expect([refused.status, refused.message]).toEqual([503, expect.stringContaining('The lock on instance "cache" was lost')]);
      await aborted.opened;
      const next = await store.withLock("cache", 1_000, async (held) => {
        await held.saveInstance({ ...ready, plan: "next" });
        return "in";
      });
      expect(next).toBe("in");
      work.open();
      expect((await rejection((await lateWrite.opened).write)).status).toBe(503);
      expect(await store.getInstance("cache")).toMatchObject({ plan: "next", state: "ready" });
    });
  });

  describe("create", () => {
    it("records a ready instance with the request's fields and the data the handler returned", async () => {
      const { handlers, callsOf } = recordingHandlers({ create: () => ({ data: { port: 6400 } }) });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(
        createRequest("cache", { plan: "small", team: "core", tags: ["a", "b"], description: "d", parameters: { size: "2" } }),
        ctx,
      );
      const record = await store.getInstance("cache");
      expect(record).toMatchObject({
        name: "cache",
        plan: "small",
        team: "core",
        tags: ["a", "b"],
        description: "d",
        parameters: { size: "2" },
        state: "ready",
        data: { port: 6400 },
      });
      expect(record?.step).toBeUndefined();
      expect(Date.parse(record?.createdAt ?? "")).not.toBeNaN();
      expect(await lifecycle.status({ instance: "cache" }, ctx)).toBe("running");
      expect(callsOf("create")).toHaveLength(0); // the override replaced the recording create
    });

    it("hands the handler the provisioning record", async () => {
      const seen: InstanceRecord[] = [];
      const { handlers } = recordingHandlers({ create: (_request, c) => void seen.push(c.record as InstanceRecord) });
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache", { plan: "small" }), ctx);
      expect(seen).toEqual([expect.objectContaining({ name: "cache", plan: "small", state: "provisioning" })]);
    });

    it("answers 409 for a name that exists, without calling the handler", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      const error = await rejection(lifecycle.create(createRequest("cache"), ctx));
      expect(error.status).toBe(409);
      expect(error.message).toContain("already exists");
      expect(callsOf("create")).toHaveLength(1);
    });

    it("removes the record when the handler throws, so the name can be created again", async () => {
      let fail = true;
      const { handlers } = recordingHandlers({
        create: () => {
          if (fail) throw new ProviderError("Quota exceeded for team core.", 500);
        },
      });
      const { lifecycle, store } = start(handlers);
      const error = await rejection(lifecycle.create(createRequest("cache"), ctx));
      expect(error.message).toBe("Quota exceeded for team core.");
      expect(await store.getInstance("cache")).toBeUndefined();
      fail = false;
      await lifecycle.create(createRequest("cache"), ctx);
      expect((await store.getInstance("cache"))?.state).toBe("ready");
    });

    it("replaces a create whose process died before answering (the platform got no instance)", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      const time = new Date().toISOString();
      await store.withLock("cache", 1_000, (held) =>
        held.saveInstance({ name: "cache", tags: [], parameters: {}, state: "provisioning", data: {}, createdAt: time, updatedAt: time }),
      );
      expect(await lifecycle.status({ instance: "cache" }, ctx)).toBe("pending");
      await lifecycle.create(createRequest("cache", { plan: "small" }), ctx);
      expect(callsOf("create")).toHaveLength(1);
      expect(await store.getInstance("cache")).toMatchObject({ plan: "small", state: "ready" });
    });

    it("refuses a pending create when there is no provision handler, and keeps no record", async () => {
      const { handlers } = recordingHandlers({ create: () => ({ pending: true }) });
      const { lifecycle, store } = start(handlers);
      const error = await rejection(lifecycle.create(createRequest("cache"), ctx));
      expect(error.message).toContain("handlers.provision");
      expect(await store.getInstance("cache")).toBeUndefined();
    });

    it("of one name, run concurrently, creates once and answers 409 to the others", async () => {
      let creates = 0;
      const { handlers } = recordingHandlers({
        create: async () => {
          creates++;
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
      const { lifecycle } = start(handlers);
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => lifecycle.create(createRequest("race"), ctx)));
      const statuses = results.map((result) => (result.status === "fulfilled" ? 201 : (result.reason as ProviderError).status));
      expect(statuses.filter((status) => status === 201)).toHaveLength(1);
      expect(statuses.filter((status) => status === 409)).toHaveLength(7);
      expect(creates).toBe(1);
    });
  });

  describe("an unknown instance", () => {
    it("answers 404 on every instance call, without calling a handler", async () => {
      const { handlers, calls } = recordingHandlers({
        update: () => {},
        status: () => "running",
        info: () => [{ label: "a", value: "b" }],
      });
      const { lifecycle } = start(handlers);
      const instance = "ghost";
      const unit = { instance, appName: "app", appHost: "app.example.com", unitHost: "10.0.0.1" };
      const job = { instance, jobName: "nightly", parameters: {}, placement: { clusterAddresses: [] } };
      const attempts: Array<() => Promise<unknown>> = [
        () => lifecycle.update({ instance, tags: [], parameters: {} }, ctx),
        () => lifecycle.destroy({ instance }, ctx),
        () => lifecycle.bindApp(bindAppRequest(instance, "app"), ctx),
        () => lifecycle.unbindApp(unbindAppRequest(instance, "app"), ctx),
        () => lifecycle.bindUnit(unit, ctx),
        () => lifecycle.unbindUnit(unit, ctx),
        () => lifecycle.bindJob(job, ctx),
        () => lifecycle.unbindJob(job, ctx),
        () => lifecycle.status({ instance }, ctx),
        () => lifecycle.info({ instance }, ctx),
      ];
      for (const attempt of attempts) {
        const error = await rejection(attempt());
        expect(error.status).toBe(404);
        expect(error.message).toBe('Instance "ghost" not found.');
      }
      expect(calls).toEqual([]);
    });

    it("still answers 404 'not supported' for a route whose optional handler is absent", async () => {
      const { handlers } = recordingHandlers();
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      const error = await rejection(lifecycle.update({ instance: "cache", tags: [], parameters: {} }, ctx));
      expect(error.status).toBe(404);
      expect(error.message).toContain("does not support updating");
      expect((await rejection(lifecycle.info({ instance: "cache" }, ctx))).message).toContain("does not support extra info");
    });
  });

  describe("bindings", () => {
    it("binds an app, and a second bind-app of that app calls the handler again with the binding", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      expect(await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx)).toEqual({ APP: "web" });
      expect(await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx)).toEqual({ APP: "web" });
      const [first, second] = callsOf("bindApp");
      expect(first?.binding).toBeUndefined();
      expect(first?.record).toMatchObject({ name: "cache", state: "ready" });
      expect(second?.binding).toMatchObject({ instance: "cache", kind: "app", key: "web", appName: "web" });
      expect(await store.listBindings("cache")).toHaveLength(1);
    });

    it("keys app bindings by app name, not by its host (which changes with routers)", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web", { appHost: "old-router.example.com" }), ctx);
      await lifecycle.unbindApp(unbindAppRequest("cache", "web", { appHost: "new-router.example.com" }), ctx);
      expect(callsOf("unbindApp")).toEqual([expect.objectContaining({ binding: expect.objectContaining({ appHost: "old-router.example.com" }) })]);
      expect(await store.listBindings("cache")).toEqual([]);
    });

    it("keys a Variant B binding (hostname only) by that hostname", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "", { appName: undefined, appHost: "web.example.com" }), ctx);
      expect(await store.getBinding("cache", "app", "web.example.com")).toMatchObject({ appHost: "web.example.com" });
      await lifecycle.unbindApp(unbindAppRequest("cache", "", { appName: undefined, appHost: "web.example.com" }), ctx);
      expect(callsOf("unbindApp")).toHaveLength(1);
      expect(await store.listBindings("cache")).toEqual([]);
    });

    it("unbinding one app leaves the other apps' bindings alone", async () => {
      const { handlers } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "worker"), ctx);
      await lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx);
      expect((await store.listBindings("cache")).map((binding) => binding.key)).toEqual(["worker"]);
    });

    it("answers an unbind of a binding that is already gone with success, without the handler", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx);
      await lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx);
      await lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx); // the platform's compensating call
      await lifecycle.unbindApp(unbindAppRequest("cache", "never-bound"), ctx);
      const unit = { instance: "cache", appName: "web", unitHost: "10.0.0.9" };
      await lifecycle.unbindUnit(unit, ctx);
      await lifecycle.unbindJob({ instance: "cache", jobName: "nightly", placement: { clusterAddresses: [] } }, ctx);
      expect(callsOf("unbindApp")).toHaveLength(1);
      expect(callsOf("unbindUnit")).toHaveLength(0);
      expect(callsOf("unbindJob")).toHaveLength(0);
    });

    it("keeps the binding when the unbind handler fails, so the platform's retry reaches the handler", async () => {
      let fail = true;
      const { handlers, callsOf } = recordingHandlers();
      const unbindApp = handlers.unbindApp;
      handlers.unbindApp = (request, c) => {
        void unbindApp(request, c);
        if (fail) throw new ProviderError("Could not drop the user; try again.");
      };
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx);
      expect((await rejection(lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx))).status).toBe(500);
      expect(await store.listBindings("cache")).toHaveLength(1);
      fail = false;
      await lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx);
      expect(callsOf("unbindApp")).toHaveLength(2);
      expect(await store.listBindings("cache")).toEqual([]);
    });

    it("records no binding when the bind handler fails", async () => {
      const { handlers } = recordingHandlers({
        bindApp: () => {
          throw new ProviderError("No credentials left.");
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await rejection(lifecycle.bindApp(bindAppRequest("cache", "web"), ctx));
      expect(await store.listBindings("cache")).toEqual([]);
    });

    it("keys unit bindings by unit host and job bindings by job name", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindUnit({ instance: "cache", appName: "web", appHost: "web.example.com", unitHost: "10.0.0.1" }, ctx);
      await lifecycle.bindUnit({ instance: "cache", appName: "web", appHost: "web.example.com", unitHost: "10.0.0.2" }, ctx);
      expect(await lifecycle.bindJob({ instance: "cache", jobName: "nightly", parameters: {}, placement: { clusterAddresses: [] } }, ctx)).toEqual({
        JOB: "nightly",
      });
      expect(await store.getBinding("cache", "unit", "10.0.0.1")).toMatchObject({ appName: "web", unitHost: "10.0.0.1" });
      expect(await store.getBinding("cache", "job", "nightly")).toMatchObject({ jobName: "nightly" });
      await lifecycle.unbindUnit({ instance: "cache", appName: "web", unitHost: "10.0.0.1" }, ctx);
      await lifecycle.unbindJob({ instance: "cache", jobName: "nightly", placement: { clusterAddresses: [] } }, ctx);
      expect(callsOf("unbindUnit")[0]?.binding).toMatchObject({ key: "10.0.0.1" });
      expect(callsOf("unbindJob")[0]?.binding).toMatchObject({ key: "nightly" });
      expect((await store.listBindings("cache")).map((binding) => binding.key)).toEqual(["10.0.0.2"]);
    });

    it("records every one of many concurrent binds to one instance", async () => {
      const { handlers } = recordingHandlers({
        bindApp: async (request) => {
          await new Promise((resolve) => setTimeout(resolve, 2));
          return { APP: request.appName ?? "" };
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      const apps = Array.from({ length: 30 }, (_, i) => `app-${i}`);
      const results = await Promise.all(apps.map((app) => lifecycle.bindApp(bindAppRequest("cache", app), ctx)));
      expect(results).toEqual(apps.map((app) => ({ APP: app })));
      expect((await store.listBindings("cache")).map((binding) => binding.key).sort()).toEqual([...apps].sort());
    });

    it("answers 503 with a clear message when another call holds the instance longer than the lock timeout", async () => {
      const held = gate();
      const entered = gate();
      const { handlers } = recordingHandlers({
        bindApp: async () => {
          entered.open();
          await held.opened;
          return {};
        },
      });
      const { lifecycle } = start(handlers, { lockTimeoutMs: 200 });
      await lifecycle.create(createRequest("cache"), ctx);
      const slow = lifecycle.bindApp(bindAppRequest("cache", "slow"), ctx);
      await entered.opened;
      const error = await rejection(lifecycle.bindApp(bindAppRequest("cache", "other"), ctx));
      expect(error.status).toBe(503);
      expect(error.message).toBe('Another operation on instance "cache" is still running; try again in a moment.');
      held.open();
      await slow;
      expect(await lifecycle.bindApp(bindAppRequest("cache", "other"), ctx)).toEqual({});
    });
  });

  it("hands handlers the call's context (request id, signal, logger) without building the lazy logger", async () => {
    let loggerBuilt = 0;
    const signal = new AbortController().signal;
    const lazy = {
      requestId: "req-42",
      user: "alice",
      signal,
      placement: { poolName: "pool-a", clusterAddresses: [] },
      throwIfAborted: () => signal.throwIfAborted(),
      deadline: Number.POSITIVE_INFINITY,
      claimAnswer: () => true,
      waitingForLock: () => {},
      get log() {
        loggerBuilt++;
        return silent;
      },
    };
    const seen: HandlerContext[] = [];
    const { handlers } = recordingHandlers({ bindApp: (_request, c) => void seen.push(c) });
    const { lifecycle } = start(handlers);
    await lifecycle.create(createRequest("cache"), ctx);
    await lifecycle.bindApp(bindAppRequest("cache", "web"), lazy);
    expect(loggerBuilt).toBe(0);
    expect(seen[0]).toMatchObject({ requestId: "req-42", user: "alice", signal, placement: { poolName: "pool-a" }, record: { name: "cache" } });
    expect(seen[0]?.log).toBe(silent);
    expect(loggerBuilt).toBe(1);
  });

  it("drops a call whose caller gave up while it waited for the lock", async () => {
    const held = gate();
    const entered = gate();
    const bound: string[] = [];
    const { handlers } = recordingHandlers({
      bindApp: async (request) => {
        bound.push(request.appName ?? "");
        entered.open();
        await held.opened;
        return {};
      },
    });
    const { lifecycle, store } = start(handlers);
    await lifecycle.create(createRequest("cache"), ctx);
    const first = lifecycle.bindApp(bindAppRequest("cache", "first"), ctx);
    await entered.opened;
    const caller = new AbortController();
    const late = lifecycle.bindApp(bindAppRequest("cache", "late"), {
      ...ctx,
      signal: caller.signal,
      throwIfAborted: () => caller.signal.throwIfAborted(),
    });
    caller.abort(new Error("handler timeout"));
    // Caught from now on: the dropped call may fail before the first one has answered.
    const lateError = rejection(late);
    held.open();
    await first;
    expect((await lateError).message).toBe("handler timeout");
    expect(bound).toEqual(["first"]);
    expect((await store.listBindings("cache")).map((binding) => binding.key)).toEqual(["first"]);
  });

  describe("status and info", () => {
    it("calls the status handler for a ready instance so it can report the resource's own state", async () => {
      const { handlers } = recordingHandlers({
        status: (_request, c) => ({ down: `redis on port ${c.record?.data.port as number} does not answer` }),
        create: () => ({ data: { port: 7000 } }),
      });
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      expect(await lifecycle.status({ instance: "cache" }, ctx)).toEqual({ down: "redis on port 7000 does not answer" });
    });

    it("gives the info handler the record", async () => {
      const { handlers } = recordingHandlers({
        create: () => ({ data: { port: 7000 } }),
        info: (_request, c) => [{ label: "Port", value: `${c.record?.data.port as number}` }],
      });
      const { lifecycle } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      expect(await lifecycle.info({ instance: "cache" }, ctx)).toEqual([{ label: "Port", value: "7000" }]);
    });
  });

  describe("update", () => {
    it("passes the new request and the old record (updating), then keeps the new fields and data", async () => {
      const seen: InstanceRecord[] = [];
      const { handlers } = recordingHandlers({
        update: (_request, c) => {
          seen.push(c.record as InstanceRecord);
          return { data: { maxmemory: "2gb" } };
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache", { plan: "small", tags: ["x"] }), ctx);
      await lifecycle.update({ instance: "cache", plan: "large", team: "ops", tags: ["y"], description: "bigger", parameters: { a: "1" } }, ctx);
      expect(seen).toEqual([expect.objectContaining({ plan: "small", state: "updating" })]);
      expect(await store.getInstance("cache")).toMatchObject({
        plan: "large",
        team: "ops",
        tags: ["y"],
        description: "bigger",
        parameters: { a: "1" },
        state: "ready",
        data: { maxmemory: "2gb" },
      });
    });

    it("leaves the instance as it was (ready) when the update handler fails", async () => {
      const { handlers } = recordingHandlers({
        update: () => {
          throw new ProviderError("That plan does not exist.", 400);
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache", { plan: "small" }), ctx);
      expect((await rejection(lifecycle.update({ instance: "cache", plan: "huge", tags: [], parameters: {} }, ctx))).status).toBe(400);
      expect(await store.getInstance("cache")).toMatchObject({ plan: "small", state: "ready" });
    });
  });

  describe("destroy", () => {
    it("removes the instance and all its bindings", async () => {
      const { handlers, callsOf } = recordingHandlers();
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx);
      await lifecycle.destroy({ instance: "cache" }, ctx);
      expect(callsOf("destroy")[0]?.record).toMatchObject({ name: "cache", state: "ready" });
      expect(await store.getInstance("cache")).toBeUndefined();
      expect(await store.listBindings("cache")).toEqual([]);
      expect((await rejection(lifecycle.status({ instance: "cache" }, ctx))).status).toBe(404);
      await lifecycle.create(createRequest("cache"), ctx);
    });

    it("keeps the instance when the destroy handler fails", async () => {
      const { handlers } = recordingHandlers({
        destroy: () => {
          throw new ProviderError("The server refused to stop.");
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await rejection(lifecycle.destroy({ instance: "cache" }, ctx));
      expect((await store.getInstance("cache"))?.state).toBe("ready");
    });

    it("in the background: deleting until deprovision ends, then gone; calls meanwhile get fixed answers", async () => {
      const released = gate();
      const deprovisioned: InstanceRecord[] = [];
      const { handlers, callsOf } = recordingHandlers({
        create: () => ({ data: { port: 7001 } }),
        destroy: () => ({ pending: true, data: { stopping: true } }),
        deprovision: async (record) => {
          deprovisioned.push(record);
          await released.opened;
        },
      });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx);
      await lifecycle.destroy({ instance: "cache" }, ctx);
      expect(await store.getInstance("cache")).toMatchObject({ state: "deleting", step: { kind: "deprovision" } });
      await eventually(() => deprovisioned[0]);
      expect(deprovisioned[0]?.data).toEqual({ port: 7001, stopping: true });

      await lifecycle.destroy({ instance: "cache" }, ctx); // destroy while deleting: nothing more to do
      expect(callsOf("destroy")).toHaveLength(0);
      await lifecycle.unbindApp(unbindAppRequest("cache", "web"), ctx); // goes with the instance
      expect(callsOf("unbindApp")).toHaveLength(0);
      expect(await lifecycle.status({ instance: "cache" }, ctx)).toEqual({ down: "The instance is being removed." });
      const bind = await rejection(lifecycle.bindApp(bindAppRequest("cache", "other"), ctx));
      expect([bind.status, bind.message]).toEqual([404, 'Instance "cache" is being removed.']);
      const create = await rejection(lifecycle.create(createRequest("cache"), ctx));
      expect(create.status).toBe(409);
      expect(create.message).toContain("still being removed");

      released.open();
      await eventually(async () => ((await store.getInstance("cache")) === undefined ? true : undefined));
      expect(await store.listBindings("cache")).toEqual([]);
    });

    it("refuses a pending destroy when there is no deprovision handler, and keeps the instance", async () => {
      const { handlers } = recordingHandlers({ destroy: () => ({ pending: true }) });
      const { lifecycle, store } = start(handlers);
      await lifecycle.create(createRequest("cache"), ctx);
      expect((await rejection(lifecycle.destroy({ instance: "cache" }, ctx))).message).toContain("handlers.deprovision");
      expect((await store.getInstance("cache"))?.state).toBe("ready");
    });
  });
});
