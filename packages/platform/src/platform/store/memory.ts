/**
 * State in memory: for throw-away runs (`--memory`) and tests. Values are copied in and out,
 * so callers can never change a stored record without `put`, as with Redis.
 */
import type { ProviderCall } from "../domain/model.js";
import type { CallEntry, Kind, Lists, Records, PlatformStore, TimelineBounds } from "./store.js";

const copy = <T>(value: T): T => structuredClone(value);

export class MemoryPlatformStore implements PlatformStore {
  readonly name = "memory";
  private readonly records = new Map<Kind, Map<string, unknown>>();
  private readonly lists = new Map<string, unknown[]>();
  private readonly counters = new Map<string, number>();
  /** The timeline: entries oldest first, each call kept as its JSON (what the bytes bound counts). */
  private callEntryList: CallEntry[] = [];
  private readonly callJson = new Map<number, string>();
  private callBytes = 0;

  private kind(kind: Kind): Map<string, unknown> {
    let records = this.records.get(kind);
    if (!records) this.records.set(kind, (records = new Map<string, unknown>()));
    return records;
  }

  async get<K extends Kind>(kind: K, key: string) {
    const value = this.kind(kind).get(key) as Records[K] | undefined;
    return value === undefined ? undefined : copy(value);
  }

  async put<K extends Kind>(kind: K, key: string, value: Records[K]) {
    this.kind(kind).set(key, copy(value));
  }

  async delete(kind: Kind, key: string) {
    return this.kind(kind).delete(key);
  }

  async all<K extends Kind>(kind: K) {
    return [...this.kind(kind).values()].map((value) => copy(value as Records[K]));
  }

  async append<L extends keyof Lists>(list: L, name: string, item: Lists[L], max: number) {
    const key = `${list}:${name}`;
    const items = this.lists.get(key) ?? [];
    items.push(copy(item));
    this.lists.set(key, items.slice(-max));
  }

  async items<L extends keyof Lists>(list: L, name: string) {
    return copy((this.lists.get(`${list}:${name}`) ?? []) as Array<Lists[L]>);
  }

  async clear(list: keyof Lists, name: string) {
    this.lists.delete(`${list}:${name}`);
  }

  async appendCall(entry: CallEntry, call: ProviderCall, bounds: TimelineBounds) {
    const json = JSON.stringify(call);
    this.callEntryList.push(copy(entry));
    this.callJson.set(entry.id, json);
    this.callBytes += Buffer.byteLength(json);
    while (this.callEntryList.length > bounds.calls || this.callBytes > bounds.bytes) {
      const oldest = this.callEntryList.shift()!;
      this.callBytes -= Buffer.byteLength(this.callJson.get(oldest.id) ?? "");
      this.callJson.delete(oldest.id);
    }
  }

  async callEntries() {
    return copy(this.callEntryList);
  }

  async calls(ids: readonly number[]) {
    return ids.flatMap((id) => {
      const json = this.callJson.get(id);
      return json === undefined ? [] : [JSON.parse(json) as ProviderCall];
    });
  }

  async clearCalls() {
    this.callEntryList = [];
    this.callJson.clear();
    this.callBytes = 0;
  }

  async next(counter: string) {
    const value = (this.counters.get(counter) ?? 0) + 1;
    this.counters.set(counter, value);
    return value;
  }

  async ping() {}

  async close() {}
}
