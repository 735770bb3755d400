/**
 * The default store: everything in this process's memory. Right for tests and a single
 * replica that may forget its instances on restart; use `RedisStore` for anything else.
 */
import type { BindingKind, BindingRecord, InstanceRecord } from "../types.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { emptyCensus, type Store, type StoreCensus } from "./store.js";

const bindingKey = (kind: BindingKind, key: string) => `${kind}:${key}`;

export class MemoryStore implements Store {
  private readonly instances = new Map<string, InstanceRecord>();
  /** Instance name → (kind:key → binding). */
  private readonly bindings = new Map<string, Map<string, BindingRecord>>();
  private readonly leases = new Map<string, { owner: string; expiresAt: number }>();
  private readonly locks = new KeyedMutex();

  // Records are copied in and out, as a remote store would, so a caller's edits never
  // change the stored state behind the registry's back.

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    const record = this.instances.get(name);
    return record && structuredClone(record);
  }

  async insertInstance(record: InstanceRecord): Promise<boolean> {
    if (this.instances.has(record.name)) return false;
    this.instances.set(record.name, structuredClone(record));
    return true;
  }

  async saveInstance(record: InstanceRecord): Promise<void> {
    this.instances.set(record.name, structuredClone(record));
  }

  async deleteInstance(name: string): Promise<void> {
    this.instances.delete(name);
    this.bindings.delete(name);
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    return [...this.instances.values()].filter((record) => record.step).map((record) => structuredClone(record));
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    const binding = this.bindings.get(instance)?.get(bindingKey(kind, key));
    return binding && structuredClone(binding);
  }

  async saveBinding(binding: BindingRecord): Promise<void> {
    let forInstance = this.bindings.get(binding.instance);
    if (!forInstance) this.bindings.set(binding.instance, (forInstance = new Map()));
    forInstance.set(bindingKey(binding.kind, binding.key), structuredClone(binding));
  }

  async deleteBinding(instance: string, kind: BindingKind, key: string): Promise<boolean> {
    return this.bindings.get(instance)?.delete(bindingKey(kind, key)) ?? false;
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    return [...(this.bindings.get(instance)?.values() ?? [])].map((binding) => structuredClone(binding));
  }

  withLock<T>(instance: string, waitMs: number, work: () => Promise<T>): Promise<T> {
    return this.locks.hold(instance, waitMs, work);
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
    const census = emptyCensus();
    for (const record of this.instances.values()) census.instances[record.state] += 1;
    for (const forInstance of this.bindings.values()) {
      for (const binding of forInstance.values()) census.bindings[binding.kind] += 1;
    }
    return census;
  }

  async close(): Promise<void> {}
}
