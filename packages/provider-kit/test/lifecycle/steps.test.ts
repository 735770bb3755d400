/**
 * Background steps: async provisioning and removal, retries, the time limit, and a restarted
 * provider taking over a step its previous run left half done. On both stores. (A lease a
 * RedisStore cannot renew: packages/redis-store/test/step-lease.test.ts.)
 */
import { describe, expect, it } from "vitest";
import { ProviderError } from "../../src/errors.js";
import type { RegistryOptions } from "../../src/lifecycle/registry.js";
import type { Store } from "../../src/lifecycle/store.js";
import type { InstanceRecord, ProviderHandlers, StepContext } from "../../src/types.js";
import { bindAppRequest, context, createRequest, eventually, gate, rejection, STORE_KINDS, useLifecycles } from "./helpers.js";

/**
 * Short settings so retries happen within a test. The lease keeps its default: on a busy machine a
 * short one lapses between two renewals and another attempt starts.
 */
const FAST: Partial<RegistryOptions> = { stepRetryDelayMs: 10, pollIntervalMs: 50 };
/** For the test about a takeover: a lease that lapses soon after its renewals stop. */
const SHORT_LEASE: Partial<RegistryOptions> = { leaseTtlMs: 600 };

function asyncHandlers(provision: ProviderHandlers["provision"], extra: Partial<ProviderHandlers> = {}): ProviderHandlers {
  return {
    create: () => ({ pending: true, data: { requested: true } }),
    provision,
    destroy: () => {},
    bindApp: () => ({ URL: "redis://somewhere" }),
    unbindApp: () => {},
    ...extra,
  };
}

describe.each(STORE_KINDS)("background steps on the %s store", (kind) => {
  const { stores, start } = useLifecycles(kind, FAST);

  const ctx = context();
  const stateOf = async (store: Store, name: string) => (await store.getInstance(name))?.state;
  const stateBecomes = (store: Store, name: string, state: string) =>
    eventually(async () => ((await stateOf(store, name)) === state ? (await store.getInstance(name)) : undefined));

  it("answers create at once; status says pending and bind 412 until provision succeeds, then running and bound", async () => {
    const finish = gate();
    const calls: Array<{ record: InstanceRecord; context: StepContext }> = [];
    const { lifecycle, store } = start(
      asyncHandlers(async (record, stepContext) => {
        calls.push({ record, context: stepContext });
        await finish.opened;
        return { data: { port: 6500 } };
      }),
    );
    await lifecycle.create(createRequest("cache"), ctx);
    expect(await lifecycle.status({ instance: "cache" }, ctx)).toBe("pending");
    const early = await rejection(lifecycle.bindApp(bindAppRequest("cache", "web"), ctx));
    expect([early.status, early.message]).toEqual([412, 'Instance "cache" is still being provisioned; try again in a moment.']);
    await eventually(() => calls[0]);
    expect(calls[0]?.record).toMatchObject({ state: "provisioning", data: { requested: true }, step: { kind: "provision", attempts: 1 } });
    expect(calls[0]?.context.attempt).toBe(1);

    finish.open();
    const ready = await stateBecomes(store, "cache", "ready");
    expect(ready.data).toEqual({ requested: true, port: 6500 });
    expect(ready.step).toBeUndefined();
    expect(await lifecycle.status({ instance: "cache" }, ctx)).toBe("running");
    expect(await lifecycle.bindApp(bindAppRequest("cache", "web"), ctx)).toEqual({ URL: "redis://somewhere" });
    expect(calls).toHaveLength(1);
  });

  it("retries a failing provision and succeeds on a later attempt", async () => {
    const attempts: number[] = [];
    const { lifecycle, store } = start(
      asyncHandlers(async (_record, stepContext) => {
        attempts.push(stepContext.attempt);
        if (stepContext.attempt < 3) throw new ProviderError("The port is still in use.");
      }),
    );
    await lifecycle.create(createRequest("cache"), ctx);
    const ready = await stateBecomes(store, "cache", "ready");
    expect(attempts).toEqual([1, 2, 3]);
    expect(ready.reason).toBeUndefined();
  });

  it("marks the instance failed with the reason after the last attempt; status, bind and update say so", async () => {
    let tries = 0;
    const { lifecycle, store } = start(
      asyncHandlers(
        () => {
          tries++;
          throw new ProviderError("No free port left on the host.");
        },
        { update: () => {} },
      ),
      { maxStepAttempts: 3 },
    );
    await lifecycle.create(createRequest("cache"), ctx);
    const failed = await stateBecomes(store, "cache", "failed");
    const reason = "Provisioning failed after 3 attempt(s): No free port left on the host.";
    expect(tries).toBe(3);
    expect(failed.reason).toBe(reason);
    expect(failed.step).toBeUndefined();
    expect(await lifecycle.status({ instance: "cache" }, ctx)).toEqual({ down: reason });
    const bind = await rejection(lifecycle.bindApp(bindAppRequest("cache", "web"), ctx));
    expect(bind.status).toBe(500);
    expect(bind.message).toBe(`Instance "cache" failed: ${reason}. Remove it and create it again.`);
    expect((await rejection(lifecycle.update({ instance: "cache", tags: [], parameters: {} }, ctx))).status).toBe(500);
  });

  it("lets a failed instance be destroyed (the handler sees it failed) and its name reused", async () => {
    const destroyed: InstanceRecord[] = [];
    const { lifecycle, store } = start(
      asyncHandlers(
        () => {
          throw new ProviderError("Disk full.");
        },
        { destroy: (_request, c) => void destroyed.push(c.record as InstanceRecord) },
      ),
      { maxStepAttempts: 1 },
    );
    await lifecycle.create(createRequest("cache"), ctx);
    await stateBecomes(store, "cache", "failed");
    await lifecycle.destroy({ instance: "cache" }, ctx);
    expect(destroyed).toEqual([expect.objectContaining({ state: "failed", data: { requested: true } })]);
    expect(await store.getInstance("cache")).toBeUndefined();
  });

  it("keeps a handler's unexpected error message out of the reason users see", async () => {
    const { lifecycle, store } = start(
      asyncHandlers(() => {
        throw new Error("connect to redis://admin:s3cret@10.0.0.5 refused");
      }),
      { maxStepAttempts: 1 },
    );
    await lifecycle.create(createRequest("cache"), ctx);
    const failed = await stateBecomes(store, "cache", "failed");
    expect(failed.reason).toBe("Provisioning failed after 1 attempt(s): the handler failed unexpectedly (the provider's log has the details)");
    expect(failed.reason).not.toContain("s3cret");
  });

  it("gives up a step that outlives its time limit, and aborts the handler's signal", async () => {
    let aborted = false;
    const { lifecycle, store } = start(
      asyncHandlers(
        (_record, stepContext) =>
          new Promise((resolve) =>
            stepContext.signal.addEventListener("abort", () => {
              aborted = true;
              resolve();
            }),
          ),
      ),
      { stepTimeLimitMs: 300 },
    );
    await lifecycle.create(createRequest("cache"), ctx);
    const failed = await stateBecomes(store, "cache", "failed");
    expect(failed.reason).toBe("Provisioning failed after 1 attempt(s): it did not finish within 300 ms");
    expect(aborted).toBe(true);
  });

  it("finishes the work after a restart: a new lifecycle on the same store takes the step over once the lease expires", async () => {
    const firstRun = gate();
    const first = start(
      asyncHandlers((_record, stepContext) => {
        firstRun.open();
        return new Promise(() => stepContext.signal.addEventListener("abort", () => {})); // never ends: the process "dies"
      }),
      SHORT_LEASE,
    );
    await first.lifecycle.create(createRequest("cache"), ctx);
    await firstRun.opened;
    await first.lifecycle.close(); // the step in flight is abandoned, its lease left to expire

    const attempts: number[] = [];
    const second = start(
      asyncHandlers(async (record, stepContext) => {
        attempts.push(stepContext.attempt);
        return { data: { port: record.step?.attempts ?? 0 } };
      }),
      { ...SHORT_LEASE, store: stores.reopen(first.store) },
    );
    const ready = await stateBecomes(second.store, "cache", "ready");
    expect(attempts).toEqual([2]);
    expect(ready.data).toEqual({ requested: true, port: 2 });
    expect(await second.lifecycle.status({ instance: "cache" }, ctx)).toBe("running");
  });

  it("queues a destroy that arrives while provisioning; the removal runs once the provision attempt ends", async () => {
    const finish = gate();
    const started = gate();
    const deprovisioned: InstanceRecord[] = [];
    const { lifecycle, store } = start(
      asyncHandlers(
        async () => {
          started.open();
          await finish.opened;
          return { data: { port: 6600 } };
        },
        { deprovision: (record) => void deprovisioned.push(record) },
      ),
    );
    await lifecycle.create(createRequest("cache"), ctx);
    await started.opened;
    await lifecycle.destroy({ instance: "cache" }, ctx); // the platform's compensating call
    expect(await stateOf(store, "cache")).toBe("deleting");
    expect(deprovisioned).toEqual([]);
    finish.open();
    await eventually(async () => ((await store.getInstance("cache")) === undefined ? true : undefined));
    // The removal saw what provisioning made, so nothing leaks.
    expect(deprovisioned).toEqual([expect.objectContaining({ state: "deleting", data: { requested: true, port: 6600 } })]);
  });

  it("without a deprovision handler, a queued destroy runs the destroy handler in the background", async () => {
    const finish = gate();
    const started = gate();
    const destroyed: InstanceRecord[] = [];
    const { lifecycle, store } = start(
      asyncHandlers(
        async () => {
          started.open();
          await finish.opened;
          return { data: { port: 6700 } };
        },
        { destroy: (_request, c) => void destroyed.push(c.record as InstanceRecord) },
      ),
    );
    await lifecycle.create(createRequest("cache"), ctx);
    await started.opened;
    await lifecycle.destroy({ instance: "cache" }, ctx);
    finish.open();
    await eventually(async () => ((await store.getInstance("cache")) === undefined ? true : undefined));
    expect(destroyed).toEqual([expect.objectContaining({ data: { requested: true, port: 6700 } })]);
  });

  it("marks a removal that keeps failing as failed, and a second destroy can try again", async () => {
    let deprovisionWorks = false;
    const { lifecycle, store } = start(
      {
        create: () => {},
        destroy: () => ({ pending: true }),
        deprovision: () => {
          if (!deprovisionWorks) throw new ProviderError("The volume is busy.");
        },
        bindApp: () => ({}),
        unbindApp: () => {},
      },
      { maxStepAttempts: 2 },
    );
    await lifecycle.create(createRequest("cache"), ctx);
    await lifecycle.destroy({ instance: "cache" }, ctx);
    const failed = await stateBecomes(store, "cache", "failed");
    expect(failed.reason).toBe("Removal failed after 2 attempt(s): The volume is busy.");
    deprovisionWorks = true;
    await lifecycle.destroy({ instance: "cache" }, ctx);
    await eventually(async () => ((await store.getInstance("cache")) === undefined ? true : undefined));
  });
});
