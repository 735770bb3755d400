/**
 * Where the registry keeps instances, bindings, locks and leases.
 * Two implementations: `MemoryStore` (one process: tests and trials) and `RedisStore` (production,
 * several replicas).
 *
 * Every write goes through the instance lock (`withLock`) and is fenced by it: a holder whose
 * lock was let go (past its `holdUntil`) or taken by someone else (a Redis failover that lost it)
 * has its writes refused with `LockLostError`, so a late writer never overwrites what the next
 * holder saved.
 */
import { ProviderError } from "../errors.js";
import { LazyAbort } from "../lazy-abort.js";
import type { BindingKind, BindingRecord, InstanceRecord, InstanceState } from "../types.js";

/** 503: another call on the same instance held its lock for longer than the caller may wait. */
export class LockTimeoutError extends ProviderError {
  constructor(instance: string, options?: ErrorOptions) {
    super(`Another operation on instance "${instance}" is still running; try again in a moment.`, 503, options);
  }
}

/** 503: the call's instance lock was let go or taken over before its change was saved; the change is refused. */
export class LockLostError extends ProviderError {
  constructor(instance: string) {
    super(
      `The lock on instance "${instance}" was lost before this call's change was saved (the call outlasted its time limit, ` +
        "or the state store lost the lock), so the change was not saved. Try again in a moment.",
      503,
    );
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

/** How `withLock` holds the lock, besides how long it waits for it. */
export interface LockOptions {
  /** The binding to read with the lock (`LockedInstance.binding`). */
  binding?: BindingRef;
  /**
   * When (`Date.now()` time) the lock is let go even if the work still runs: its signal aborts,
   * its writes are refused from then on, and `withLock` rejects with `LockLostError` without
   * waiting for it. Absent: the lock is held (and renewed) until the work settles.
   */
  holdUntil?: number;
}

/** How a write is made under the instance lock. */
export interface WriteOptions {
  /**
   * The work's last write: the store may let the lock go with it, in the same step (for
   * `RedisStore`, one round trip instead of two). Every write after it is refused.
   */
  last?: boolean;
}

/** A write made with `last`, for the calls that make their last write in one place. */
export const LAST_WRITE: WriteOptions = Object.freeze({ last: true });

/** How an instance is deleted. */
export interface DeleteOptions extends WriteOptions {
  /**
   * Leave a tombstone for this long (ms): `Store.wasRemoved` answers true until it lapses or the
   * name is saved again. Absent: none, for an instance the platform was never given.
   */
  tombstoneMs?: number;
}

/**
 * A removal the platform asked for, remembered for a day: long enough for a platform polling
 * the removal (OSB `last_operation`) to learn it finished (410), not to be told the instance
 * never existed (404).
 */
export const REMOVAL: DeleteOptions = Object.freeze({ tombstoneMs: 24 * 60 * 60 * 1_000 });

/** What the work of `withLock` gets: the state read as the lock was taken, and the only way to change it. */
export interface LockedInstance {
  /** The instance record, read once the lock was held; undefined when there is no such instance. */
  readonly record: InstanceRecord | undefined;
  /** The binding `withLock` was asked to read with the lock; undefined when there is none (or none was asked for). */
  readonly binding: BindingRecord | undefined;
  /** Aborts when the lock is lost (let go at `holdUntil`, or taken by another holder); its reason is the `LockLostError`. */
  readonly signal: AbortSignal;
  /** Writes the locked instance's record (created or replaced). */
  saveInstance(record: InstanceRecord, options?: WriteOptions): Promise<void>;
  /** Removes the locked instance and every binding it has. */
  deleteInstance(options?: DeleteOptions): Promise<void>;
  saveBinding(binding: BindingRecord, options?: WriteOptions): Promise<void>;
  /** Resolves false when there was no such binding. */
  deleteBinding(binding: BindingRef, options?: WriteOptions): Promise<boolean>;
}

/**
 * How a store writes one locked instance. Each write of a remote store checks the lock still
 * holds its holder's token in the same atomic step, and rejects with `LockLostError` otherwise.
 */
export type InstanceWrites = Pick<LockedInstance, "saveInstance" | "deleteInstance" | "saveBinding" | "deleteBinding">;

/** Node fires a timer set for longer than this at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * The bounds (`holdUntil`) of every hold in progress in this process, and ONE timer armed for
 * the earliest, as `deadlinesOf` (http/timeout.ts) bounds calls: a hold is a bound nearly never
 * reached (a bind holds its lock for well under a millisecond, bounded by the handler timeout
 * plus the grace, tens of seconds away), so no hold arms a timer of its own. Holds mostly come
 * in the order of their bounds: the timer is re-armed only for a bound earlier than the one it
 * waits for. Unref'd, like the holds' own work: what the holds serve keeps the process alive.
 */
class HoldBounds {
  readonly #bounds = new Map<HeldLock, number>();
  #timer: NodeJS.Timeout | undefined;
  /** The bound the timer is armed for; Infinity when none is. */
  #armedFor = Infinity;

  add(hold: HeldLock, holdUntil: number): void {
    this.#bounds.set(hold, holdUntil);
    if (holdUntil < this.#armedFor) this.#arm(holdUntil);
  }

  delete(hold: HeldLock): void {
    this.#bounds.delete(hold);
  }

  #arm(holdUntil: number): void {
    clearTimeout(this.#timer);
    this.#armedFor = holdUntil;
    this.#timer = setTimeout(() => this.#loseDue(), Math.min(Math.max(0, holdUntil - Date.now()), LONGEST_TIMER_MS));
    this.#timer.unref();
  }

  /** Every hold past its bound loses its lock; the timer waits for the earliest bound left. */
  #loseDue(): void {
    this.#timer = undefined;
    this.#armedFor = Infinity;
    const now = Date.now();
    let earliest = Infinity;
    for (const [hold, holdUntil] of this.#bounds) {
      if (holdUntil > now) earliest = Math.min(earliest, holdUntil);
      else {
        this.#bounds.delete(hold);
        hold.lose();
      }
    }
    if (earliest < Infinity) this.#arm(earliest);
  }
}

const holdBounds = new HoldBounds();

/** The `LockedInstance` both stores hand out: the reads, and writes refused once the hold is over. */
export class HeldLock implements LockedInstance {
  readonly #abort = new LazyAbort();
  /** Set once the lock is lost: the signal's reason and what the hold rejects with. */
  #lost: LockLostError | undefined;
  /** Set once the last write was sent: the lock goes with it, so a renewal finding it gone is no loss. */
  #lastWritten = false;
  #ended = false;
  /** While `hold` waits for the work: ends the hold at once when the lock is lost. */
  #onLost: ((reason: LockLostError) => void) | undefined;

  constructor(
    readonly instance: string,
    readonly record: InstanceRecord | undefined,
    readonly binding: BindingRecord | undefined,
    private readonly writes: InstanceWrites,
  ) {}

  /** Built on first read: most work never looks at it. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** The lock is no longer this holder's: its work's signal aborts and its writes are refused. */
  lose(): void {
    if (this.#lost || this.#lastWritten) return;
    this.#lost = new LockLostError(this.instance);
    this.#abort.abort(this.#lost);
    this.#onLost?.(this.#lost);
  }

  /**
   * Runs `work` on the lock just taken, the part both stores share. `letGo` frees the lock once
   * the work settles, or at once when the lock is lost (at `holdUntil` at the latest); the hold
   * then rejects with the `LockLostError` instead of waiting for work that may never settle.
   */
  hold<T>(work: (locked: LockedInstance) => Promise<T>, holdUntil: number | undefined, letGo: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (holdUntil !== undefined) holdBounds.add(this, holdUntil);
      const end = () => {
        if (this.#ended) return;
        this.#ended = true;
        this.#onLost = undefined;
        holdBounds.delete(this);
        letGo();
      };
      this.#onLost = (reason) => {
        end();
        reject(reason);
      };
      let running: Promise<T>;
      try {
        running = work(this);
      } catch (error) {
        running = Promise.reject(error);
      }
      running.then(
        (value) => {
          end();
          resolve(value);
        },
        (error: unknown) => {
          end();
          reject(error);
        },
      );
    });
  }

  saveInstance(record: InstanceRecord, options?: WriteOptions): Promise<void> {
    return this.write(() => this.writes.saveInstance(record, options), options);
  }

  deleteInstance(options?: DeleteOptions): Promise<void> {
    return this.write(() => this.writes.deleteInstance(options), options);
  }

  saveBinding(binding: BindingRecord, options?: WriteOptions): Promise<void> {
    return this.write(() => this.writes.saveBinding(binding, options), options);
  }

  deleteBinding(binding: BindingRef, options?: WriteOptions): Promise<boolean> {
    return this.write(() => this.writes.deleteBinding(binding, options), options);
  }

  private async write<T>(write: () => Promise<T>, options: WriteOptions | undefined): Promise<T> {
    if (this.#lost || this.#ended || this.#lastWritten) throw this.#lost ?? new LockLostError(this.instance);
    if (options?.last) this.#lastWritten = true;
    try {
      return await write();
    } catch (error) {
      if (error instanceof LockLostError) {
        this.#lastWritten = false;
        this.lose();
      }
      throw error;
    }
  }
}

export interface Store {
  getInstance(name: string): Promise<InstanceRecord | undefined>;
  /** Instances that still owe background work (`record.step` set). */
  listPendingSteps(): Promise<InstanceRecord[]>;

  /** True while the tombstone a deletion left (`DeleteOptions.tombstoneMs`) lasts and the name was not saved since. */
  wasRemoved(name: string): Promise<boolean>;

  getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined>;
  listBindings(instance: string): Promise<BindingRecord[]>;

  /**
   * Run `work` while holding the lock on one instance: calls on the same instance are
   * serialised, across processes for a shared store. The lock expires if its holder dies.
   * Rejects with `LockTimeoutError` when the lock is not free within `waitMs`, and with
   * `LockLostError` as soon as the lock is lost while `work` runs.
   * `work` gets the instance record (and the binding `options.binding` names) read with the
   * lock, and makes its writes through it: they are refused once the lock is no longer held.
   */
  withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, options?: LockOptions): Promise<T>;

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

  /**
   * Optional: a sentence saying what a restart of the store's own server would lose, when it
   * keeps nothing across one; logged as a warning when the provider starts.
   */
  persistenceWarning?(): Promise<string | undefined>;

  close(): Promise<void>;
}
