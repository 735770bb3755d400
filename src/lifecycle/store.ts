/**
 * Where the registry keeps instances, bindings, locks and leases.
 * Two implementations: `MemoryStore` (one process; the default) and `RedisStore` (several replicas).
 */
import { ProviderError } from "../errors.js";
import type { BindingKind, BindingRecord, InstanceRecord, InstanceState } from "../types.js";

/** 503: another call on the same instance held its lock for longer than the caller may wait. */
export class LockTimeoutError extends ProviderError {
  constructor(instance: string, options?: ErrorOptions) {
    super(`Another operation on instance "${instance}" is still running; try again in a moment.`, 503, options);
  }
}

/** How many instances are in each state, and bindings of each kind: the metrics' gauges. */
export interface StoreCensus {
  instances: Record<InstanceState, number>;
  bindings: Record<BindingKind, number>;
}

/** A census with every state and kind at zero, for a store to count into. */
export function emptyCensus(): StoreCensus {
  return {
    instances: { provisioning: 0, ready: 0, updating: 0, failed: 0, deleting: 0 },
    bindings: { app: 0, unit: 0, job: 0 },
  };
}

/** One binding of an instance: its kind and key (app name, unit host, job name). */
export interface BindingRef {
  kind: BindingKind;
  key: string;
}

/** How both stores name a binding among its instance's: `<kind>:<key>`. */
export const bindingField = (kind: BindingKind, key: string) => `${kind}:${key}`;
export const kindOfField = (field: string) => field.slice(0, field.indexOf(":")) as BindingKind;

/** A binding change made together with the release of the instance lock (a deletion is of the locked instance's binding). */
export type ReleaseWrite = { saveBinding: BindingRecord } | { deleteBinding: BindingRef };

/** What the work of `withLock` gets: the state read as the lock was taken. */
export interface LockedInstance {
  /** The instance record, read once the lock was held; undefined when there is no such instance. */
  readonly record: InstanceRecord | undefined;
  /** The binding `withLock` was asked to read with the lock; undefined when there is none (or none was asked for). */
  readonly binding: BindingRecord | undefined;
  /**
   * Make this write as the lock is released, in the same step (for `RedisStore`, the same
   * round trip). Made only if the work resolves; `withLock` resolves once it is written and
   * rejects if it could not be. A second call replaces the first.
   */
  writeOnRelease(write: ReleaseWrite): void;
}

/** The `LockedInstance` both stores hand out: the reads, and the write it was asked to make on release. */
export class HeldLock implements LockedInstance {
  releaseWrite: ReleaseWrite | undefined;
  constructor(
    readonly record: InstanceRecord | undefined,
    readonly binding: BindingRecord | undefined,
  ) {}
  writeOnRelease(write: ReleaseWrite): void {
    this.releaseWrite = write;
  }
}

export interface Store {
  getInstance(name: string): Promise<InstanceRecord | undefined>;
  /** Insert a new instance; resolves false (and writes nothing) when the name is taken. */
  insertInstance(record: InstanceRecord): Promise<boolean>;
  /** Replace an existing instance record. */
  saveInstance(record: InstanceRecord): Promise<void>;
  /** Remove the instance and every binding it has. */
  deleteInstance(name: string): Promise<void>;
  /** Instances that still owe background work (`record.step` set). */
  listPendingSteps(): Promise<InstanceRecord[]>;

  getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined>;
  saveBinding(binding: BindingRecord): Promise<void>;
  /** Resolves false when there was no such binding. */
  deleteBinding(instance: string, kind: BindingKind, key: string): Promise<boolean>;
  listBindings(instance: string): Promise<BindingRecord[]>;

  /**
   * Run `work` while holding the lock on one instance: calls on the same instance are
   * serialised, across processes for a shared store. The lock expires if its holder dies.
   * Rejects with `LockTimeoutError` when the lock is not free within `waitMs`.
   * `work` gets the instance record (and the binding `binding` names) read with the lock, and
   * may ask for one binding write to be made with its release: a call on a remote store
   * then costs two round trips, not one per step.
   */
  withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, binding?: BindingRef): Promise<T>;

  /**
   * Take or renew a lease on background work: true when `owner` holds it for the next `ttlMs`.
   * A lease whose owner stopped renewing it expires and can be taken by another owner.
   */
  acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean>;
  releaseLease(name: string, owner: string): Promise<void>;

  /**
   * Optional: counts for `GET /metrics` (a store without it leaves the instance and binding
   * gauges out). Called at every scrape: keep it O(1), counting as the state changes.
   */
  census?(): Promise<StoreCensus>;

  close(): Promise<void>;
}
