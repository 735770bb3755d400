/**
 * Everything in this process's memory: for tests and single-process trials. A restart forgets
 * every instance, and a second replica has its own: production needs `RedisStore`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { BindingKind, BindingRecord, InstanceRecord, InstanceState } from "../types.js";
import { KeyedMutex } from "./keyed-mutex.js";
import {
  bindingField,
  emptyCensus,
  HeldLock,
  kindOfField,
  type BindingRef,
  type InstanceWrites,
  type LockedInstance,
  type LockOptions,
  type Store,
  type StoreCensus,
} from "./store.js";

/**
 * Records are kept as JSON, as a remote store keeps them: every read hands out a fresh copy
 * (so a caller's edits never change the stored state behind the registry's back), and
 * parsing small JSON is cheaper than `structuredClone`.
 */
interface StoredInstance {
  json: string;
  state: InstanceState;
}

/**
 * The Redis store's page where its reader opens it: run from the sources (a checkout), the
 * repository's docs/; built, the copy the package ships, node_modules/provider-kit/docs/.
 */
const REDIS_STORE_PAGE = fileURLToPath(
  new URL(/\/src\/lifecycle\/[^/]+$/.test(import.meta.url) ? "../../../../docs/operations/redis-store.md" : "../../docs/operations/redis-store.md", import.meta.url),
);

export class MemoryStore implements Store {
  private readonly instances = new Map<string, StoredInstance>();
  /** Instance name → (kind:key → binding JSON). */
  private readonly bindings = new Map<string, Map<string, string>>();
  /** Names of the instances that owe a background step, so the step runner's poll walks only them. */
  private readonly pending = new Set<string>();
  /** Name → when its tombstone lapses (`Date.now()` time). */
  private readonly tombstones = new Map<string, number>();
  private readonly leases = new Map<string, { owner: string; expiresAt: number }>();
  private readonly locks = new KeyedMutex();
  /** Kept up to date by every write, so a scrape costs nothing. */
  private readonly counts = emptyCensus();
  private readonly productionAdvice: string | undefined;

  /**
   * `productionAdvice`: what the warning logged at start tells the operator to do in production,
   * in place of the general advice (a store that outlives the process, such as RedisStore), e.g.
   * the setting of your own that picks the store.
   */
  constructor(options: { productionAdvice?: string } = {}) {
    this.productionAdvice = options.productionAdvice;
  }

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    return this.readInstance(name);
  }

  async wasRemoved(name: string): Promise<boolean> {
    const lapses = this.tombstones.get(name);
    if (lapses === undefined) return false;
    if (lapses > Date.now()) return true;
    this.tombstones.delete(name);
    return false;
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    return [...this.pending].map((name) => this.readInstance(name)).filter((record): record is InstanceRecord => record !== undefined);
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    return this.readBinding(instance, { kind, key });
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    return [...(this.bindings.get(instance)?.values() ?? [])].map((json) => JSON.parse(json) as BindingRecord);
  }

  /** The lock is the in-process mutex; a write checks the hold in the same turn as it writes, so none lands after the lock was let go. */
  async withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, options: LockOptions = {}): Promise<T> {
    const release = await this.locks.lock(instance, waitMs);
    const binding = options.binding && this.readBinding(instance, options.binding);
    const held = new HeldLock(instance, this.readInstance(instance), binding, this.writesOf(instance));
    return held.hold(work, options.holdUntil, release);
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    const lease = this.leases.get(name);
    if (lease && lease.owner !== owner && lease.expiresAt > Date.now()) return false;
    this.leases.set(name, { owner, expiresAt: Date.now() + ttlMs });
    return true;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    if (this.leases.get(name)?.owner === owner) this.leases.delete(name);
  }

  async census(): Promise<StoreCensus> {
    return { instances: { ...this.counts.instances }, bindings: { ...this.counts.bindings } };
  }

  /** Said once at start, so a provider left on the in-memory store in production is noticed. */
  async persistenceWarning(): Promise<string> {
    // The page as a path from the working directory, which a terminal or an editor opens.
    const advice =
      this.productionAdvice ??
      "For production, use a store that outlives the process and is shared by the replicas, such as RedisStore " +
        `from @provider-kit/redis-store (${path.relative(process.cwd(), REDIS_STORE_PAGE)}).`;
    return (
      "The registry is a MemoryStore: every instance and binding the provider knows is forgotten when this process stops, " +
      `and other replicas do not see them. ${advice}`
    );
  }

  async close(): Promise<void> {}

  /** Leaves a tombstone for `name`, and lets lapsed ones go so the map holds only the recent. */
  private bury(name: string, ttlMs: number): void {
    const now = Date.now();
    for (const [buried, lapses] of this.tombstones) if (lapses <= now) this.tombstones.delete(buried);
    this.tombstones.set(name, now + ttlMs);
  }

  private readInstance(name: string): InstanceRecord | undefined {
    const stored = this.instances.get(name);
    return stored && (JSON.parse(stored.json) as InstanceRecord);
  }

  private readBinding(instance: string, { kind, key }: BindingRef): BindingRecord | undefined {
    const json = this.bindings.get(instance)?.get(bindingField(kind, key));
    return json === undefined ? undefined : (JSON.parse(json) as BindingRecord);
  }

  private writesOf(instance: string): InstanceWrites {
    return {
      saveInstance: async (record) => {
        const previous = this.instances.get(instance);
        if (previous) this.counts.instances[previous.state] -= 1;
        this.counts.instances[record.state] += 1;
        this.instances.set(instance, { json: JSON.stringify(record), state: record.state });
        this.tombstones.delete(instance);
        if (record.step) this.pending.add(instance);
        else this.pending.delete(instance);
      },
      deleteInstance: async (options) => {
        const stored = this.instances.get(instance);
        if (stored) this.counts.instances[stored.state] -= 1;
        for (const field of this.bindings.get(instance)?.keys() ?? []) this.counts.bindings[kindOfField(field)] -= 1;
        this.instances.delete(instance);
        this.bindings.delete(instance);
        this.pending.delete(instance);
        if (options?.tombstoneMs !== undefined) this.bury(instance, options.tombstoneMs);
      },
      saveBinding: async (binding) => {
        let forInstance = this.bindings.get(instance);
        if (!forInstance) this.bindings.set(instance, (forInstance = new Map<string, string>()));
        const field = bindingField(binding.kind, binding.key);
        if (!forInstance.has(field)) this.counts.bindings[binding.kind] += 1;
        forInstance.set(field, JSON.stringify(binding));
      },
      deleteBinding: async ({ kind, key }) => {
        const deleted = this.bindings.get(instance)?.delete(bindingField(kind, key)) ?? false;
        if (deleted) this.counts.bindings[kind] -= 1;
        return deleted;
      },
    };
  }
}
