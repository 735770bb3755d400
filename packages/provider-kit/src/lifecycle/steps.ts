/**
 * Background steps (`provision`, `deprovision`): run after the call that asked for them has
 * answered, retried, time-limited, and run by exactly one process at a time.
 *
 * The step to do lives on the instance record (`record.step`), so it survives restarts.
 * A process runs a step only while it holds the instance's lease in the store, renewed
 * every third of its ttl; if the process dies, the lease expires and the periodic scan of
 * any process (or of the same one after restart) takes the step over. A process that can no
 * longer prove it holds the lease (a renewal found it taken, or none succeeded for a whole
 * ttl) abandons the step, aborting its signal, so two processes never run it knowingly.
 * Attempts are counted on the record before each try, so a step that keeps killing its
 * process still ends.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { ProviderError } from "../errors.js";
import { printable, STATUS_TEXT_MAX_LENGTH } from "../printable.js";
import type { StepMetrics } from "../metrics.js";
import type { InstanceData, InstanceRecord, PendingStep, StepContext } from "../types.js";
import type { ResolvedRegistryOptions } from "./options.js";
import { REMOVAL, type LockedInstance, type Store } from "./store.js";
import { keepRenewed } from "./renewal.js";

export type StepKind = PendingStep["kind"];

/** The author's work for one kind of step; may return data to keep on the record. */
export type StepWork = (record: InstanceRecord, context: StepContext) => Promise<{ data?: InstanceData } | void>;

const STEP_LABEL: Record<StepKind, string> = { provision: "Provisioning", deprovision: "Removal" };

export function newStep(kind: StepKind, timeLimitMs: number): PendingStep {
  return { kind, attempts: 0, deadline: new Date(Date.now() + timeLimitMs).toISOString() };
}

/** What users may read about a failed try: only messages the author meant for them, made printable. */
function publicReason(error: unknown): string {
  if (error instanceof ProviderError) return printable(error.message, { oneLine: true });
  return "the handler failed unexpectedly (the provider's log has the details)";
}

type Outcome = { ok: true; data?: InstanceData } | { ok: false; error: unknown };

/** Settles with the work's outcome, or rejects as soon as `signal` aborts (the work is then abandoned). */
function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {}); // an abandoned attempt may still fail later: nobody listens any more
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

export class StepRunner {
  /** Unique per runner: a restarted process is a new owner and waits for the old lease to expire. */
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID()}`;
  /** Instances this process is driving now → how to stop it and when it has stopped. */
  private readonly running = new Map<string, { stop: AbortController; done: Promise<void> }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly stepWork: Record<StepKind, StepWork>,
    private readonly options: ResolvedRegistryOptions,
    private readonly log: Logger,
    private readonly metrics: StepMetrics,
  ) {}

  /** Take over steps left by dead processes now, and keep looking every poll interval. */
  start(): void {
    void this.scan();
    this.timer = setInterval(() => void this.scan(), this.options.pollIntervalMs);
    this.timer.unref();
  }

  /** Drive the instance's pending step in the background, unless this process already does. */
  run(instance: string): void {
    if (this.stopped || this.running.has(instance)) return;
    const stop = new AbortController();
    const done = this.drive(instance, stop)
      .catch((error: unknown) => {
        if (!this.stopped) this.log.error({ err: error, instance }, "background step stopped on a store error; the next scan retries it");
      })
      .finally(() => this.running.delete(instance));
    this.running.set(instance, { stop, done });
  }

  /**
   * Stop scanning and abandon the steps in flight without recording their outcome: the
   * attempt is already counted, and the lease, no longer renewed, lets a live process redo it.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    const inFlight = [...this.running.values()];
    for (const { stop } of inFlight) stop.abort(new Error("The provider is closing."));
    await Promise.all(inFlight.map(({ done }) => done));
  }

  private async scan(): Promise<void> {
    try {
      for (const record of await this.store.listPendingSteps()) this.run(record.name);
    } catch (error) {
      if (!this.stopped) this.log.warn({ err: error }, "could not list pending background steps; retrying at the next scan");
    }
  }

  private async drive(instance: string, stop: AbortController): Promise<void> {
    const { store, owner } = this;
    const ttl = this.options.leaseTtlMs;
    const takenAt = Date.now();
    if (!(await store.acquireLease(instance, owner, ttl))) return; // another process runs it
    // Once the lease can no longer be proven, another process may take the step over: stop it here.
    const stopRenewing = keepRenewed({
      renew: () => store.acquireLease(instance, owner, ttl),
      ttlMs: ttl,
      takenAt,
      lost: () => {
        this.log.warn({ instance }, "stopped a background step: its lease was taken over or could not be renewed in time");
        stop.abort(new Error("The step's lease was taken over or could not be renewed in time; another process may run the step."));
      },
      failed: (error) => this.log.warn({ err: error, instance }, "could not renew the step lease; retrying"),
    });
    try {
      await this.runSteps(instance, stop.signal);
    } finally {
      stopRenewing();
      // After an abort the abandoned attempt may still be running here: keep the lease until it expires.
      if (!stop.signal.aborted) await store.releaseLease(instance, owner);
    }
  }

  /** Try the instance's step until it succeeds, fails for good, or the runner lets go of it. */
  private async runSteps(instance: string, signal: AbortSignal): Promise<void> {
    for (;;) {
      const record = await this.claimAttempt(instance);
      if (record === undefined) return;
      if (record === "gave up") continue;
      const step = record.step as PendingStep;
      const outcome = await this.attempt(record, step, signal);
      if (signal.aborted) return;
      const retryInMs = await this.settle(instance, step, outcome);
      if (retryInMs > 0) await sleep(retryInMs, undefined, { signal }).catch(() => {});
    }
  }

  /** Count the next attempt on the record before making it; undefined when no step is left. */
  private claimAttempt(instance: string): Promise<InstanceRecord | "gave up" | undefined> {
    return this.store.withLock(instance, this.options.lockTimeoutMs, async (held) => {
      const record = held.record;
      if (!record?.step) return undefined;
      if (Date.now() >= Date.parse(record.step.deadline)) {
        await this.fail(held, record, `${STEP_LABEL[record.step.kind]} failed: ${this.timeLimitReason()}`);
        return "gave up";
      }
      record.step.attempts += 1;
      record.updatedAt = new Date().toISOString();
      await held.saveInstance(record);
      return record;
    });
  }

  private async attempt(record: InstanceRecord, step: PendingStep, stop: AbortSignal): Promise<Outcome> {
    this.metrics.run(step.kind);
    const timeLimit = AbortSignal.timeout(Math.max(0, Date.parse(step.deadline) - Date.now()));
    const signal = AbortSignal.any([stop, timeLimit]);
    const log = this.log.child({ instance: record.name, step: step.kind, attempt: step.attempts });
    try {
      const progress = (message: string) => this.saveProgress(record.name, step, message, signal, log);
      const work = Promise.resolve().then(() => this.stepWork[step.kind](structuredClone(record), { signal, log, attempt: step.attempts, progress }));
      const result = await untilAborted(work, signal);
      return { ok: true, data: result?.data };
    } catch (error) {
      if (stop.aborted) return { ok: false, error };
      log.warn({ err: error }, `${step.kind} attempt failed`);
      return { ok: false, error: timeLimit.aborted ? new ProviderError(this.timeLimitReason()) : error };
    }
  }

  /**
   * Keep an attempt's progress message on the record (so every store keeps it, as it keeps the
   * step): only while the attempt still speaks for the step, and never failing the attempt.
   */
  private async saveProgress(instance: string, step: PendingStep, message: string, signal: AbortSignal, log: Logger): Promise<void> {
    if (signal.aborted) return; // abandoned: another process may run the step now
    // Made printable before it is kept: every reader (status, OSB last_operation) gets clean text.
    const text = printable(String(message), { oneLine: true, maxLength: STATUS_TEXT_MAX_LENGTH });
    try {
      await this.store.withLock(instance, this.options.lockTimeoutMs, async (held) => {
        const record = held.record;
        // A destroy may have queued a removal since: this attempt's words are no longer the step's.
        if (record?.step?.kind !== step.kind || record.step.attempts !== step.attempts) return;
        if (text === "") delete record.step.progress;
        else record.step.progress = text;
        await held.saveInstance(record);
      });
    } catch (error) {
      log.warn({ err: error }, "could not save the step's progress message; the status answer keeps the previous one");
    }
  }

  /** Record the outcome of an attempt; resolves to the wait before the next try (0: go on at once). */
  private settle(instance: string, step: PendingStep, outcome: Outcome): Promise<number> {
    return this.store.withLock(instance, this.options.lockTimeoutMs, async (held) => {
      const record = held.record;
      if (!record) return 0;
      if (outcome.ok) Object.assign(record.data, outcome.data);
      record.updatedAt = new Date().toISOString();
      // A destroy arrived meanwhile and queued a removal: keep what this attempt made, then do that.
      if (record.step?.kind !== step.kind) {
        await held.saveInstance(record);
        return 0;
      }
      if (outcome.ok) {
        this.log.info({ instance, step: step.kind, attempts: record.step.attempts }, `${step.kind} finished`);
        if (step.kind === "deprovision") {
          await held.deleteInstance(REMOVAL);
          return 0;
        }
        record.state = "ready";
        delete record.step;
        delete record.reason;
        await held.saveInstance(record);
        return 0;
      }
      const reason = publicReason(outcome.error);
      const attempts = record.step.attempts;
      const delay = this.options.stepRetryDelayMs * this.options.stepRetryBackoff ** (attempts - 1);
      const timeLeft = Date.parse(record.step.deadline) - Date.now();
      if (attempts >= this.options.maxStepAttempts || timeLeft <= 0) {
        await this.fail(held, record, `${STEP_LABEL[step.kind]} failed after ${attempts} attempt(s): ${reason}`);
        return 0;
      }
      record.reason = `Attempt ${attempts} of ${this.options.maxStepAttempts} failed: ${reason}`;
      await held.saveInstance(record);
      this.metrics.retry(step.kind);
      return Math.min(delay, timeLeft);
    });
  }

  private async fail(held: LockedInstance, record: InstanceRecord, reason: string): Promise<void> {
    if (record.step) this.metrics.failure(record.step.kind);
    this.log.error({ instance: record.name, step: record.step?.kind, reason }, "background step failed for good");
    record.state = "failed";
    record.reason = reason;
    delete record.step;
    record.updatedAt = new Date().toISOString();
    await held.saveInstance(record);
  }

  private timeLimitReason(): string {
    const limit = this.options.stepTimeLimitMs;
    return `it did not finish within ${limit < 1_000 ? `${limit} ms` : `${Math.round(limit / 1_000)} s`}`;
  }
}
