/**
 * The default store: everything in this process's memory. Right for tests and a single
 * replica that may forget its instances on restart; use `RedisStore` for anything else.
 */
import type { BindingKind, BindingRecord, InstanceRecord, InstanceState } from "../types.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { bindingField, emptyCensus, HeldLock, kindOfField, type BindingRef, type LockedInstance, type ReleaseWrite, type Store, type StoreCensus } from "./store.js";

/**
 * Records are kept as JSON, as a remote store keeps them: every read hands out a fresh copy
 * (so a caller's edits never change the stored state behind the registry's back), and
 * parsing small JSON is cheaper than `structuredClone`.
 */
interface StoredInstance {
  json: string;
  state: InstanceState;
}

export class MemoryStore implements Store {
  private readonly instances = new Map<string, StoredInstance>();
  /** Instance name → (kind:key → binding JSON). */
  private readonly bindings = new Map<string, Map<string, string>>();
  /** Names of the instances that owe a background step, so the step runner's poll walks only them. */
  private readonly pending = new Set<string>();
  private readonly leases = new Map<string, { owner: string; expiresAt: number }>();
  private readonly locks = new KeyedMutex();
  /** Kept up to date by every write, so a scrape costs nothing. */
  private readonly counts = emptyCensus();

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    return this.readInstance(name);
  }

  async insertInstance(record: InstanceRecord): Promise<boolean> {
    if (this.instances.has(record.name)) return false;
    this.writeInstance(record);
    return true;
  }

  async saveInstance(record: InstanceRecord): Promise<void> {
    this.writeInstance(record);
  }

  async deleteInstance(name: string): Promise<void> {
    const stored = this.instances.get(name);
    if (stored) this.counts.instances[stored.state] -= 1;
    for (const field of this.bindings.get(name)?.keys() ?? []) this.counts.bindings[kindOfField(field)] -= 1;
    this.instances.delete(name);
    this.bindings.delete(name);
    this.pending.delete(name);
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    return [...this.pending].map((name) => this.readInstance(name)).filter((record): record is InstanceRecord => record !== undefined);
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    return this.readBinding(instance, { kind, key });
  }

  async saveBinding(binding: BindingRecord): Promise<void> {
    let forInstance = this.bindings.get(binding.instance);
    if (!forInstance) this.bindings.set(binding.instance, (forInstance = new Map()));
    const field = bindingField(binding.kind, binding.key);
    if (!forInstance.has(field)) this.counts.bindings[binding.kind] += 1;
    forInstance.set(field, JSON.stringify(binding));
  }

  async deleteBinding(instance: string, kind: BindingKind, key: string): Promise<boolean> {
    const deleted = this.bindings.get(instance)?.delete(bindingField(kind, key)) ?? false;
    if (deleted) this.counts.bindings[kind] -= 1;
    return deleted;
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    return [...(this.bindings.get(instance)?.values() ?? [])].map((json) => JSON.parse(json) as BindingRecord);
  }

  withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, binding?: BindingRef): Promise<T> {
    return this.locks.hold(instance, waitMs, async () => {
      const held = new HeldLock(this.readInstance(instance), binding && this.readBinding(instance, binding));
      const result = await work(held);
      if (held.releaseWrite) await this.write(instance, held.releaseWrite);
      return result;
    });
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

  async close(): Promise<void> {}

  private readInstance(name: string): InstanceRecord | undefined {
    const stored = this.instances.get(name);
    return stored && (JSON.parse(stored.json) as InstanceRecord);
  }

  private readBinding(instance: string, { kind, key }: BindingRef): BindingRecord | undefined {
    const json = this.bindings.get(instance)?.get(bindingField(kind, key));
    return json === undefined ? undefined : (JSON.parse(json) as BindingRecord);
  }

  private writeInstance(record: InstanceRecord): void {
    const previous = this.instances.get(record.name);
    if (previous) this.counts.instances[previous.state] -= 1;
    this.counts.instances[record.state] += 1;
    this.instances.set(record.name, { json: JSON.stringify(record), state: record.state });
    if (record.step) this.pending.add(record.name);
    else this.pending.delete(record.name);
  }

  private write(instance: string, write: ReleaseWrite): Promise<unknown> {
    if ("saveBinding" in write) return this.saveBinding(write.saveBinding);
    return this.deleteBinding(instance, write.deleteBinding.kind, write.deleteBinding.key);
  }
}
