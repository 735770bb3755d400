/**
 * State in Redis: one hash per kind (`<prefix>:<kind>`, field = key, value = JSON), one capped
 * list per log, one key per counter. With the embedded server's append-only file, a restart of
 * the platform loses nothing.
 */
import type { RedisClient } from "@provider-kit/redis-store/connection";
import type { ProviderCall } from "../domain/model.js";
import type { CallEntry, Kind, Lists, Records, PlatformStore, TimelineBounds } from "./store.js";

/**
 * Adds a call to the timeline and drops the oldest until it is within its bounds, in one step:
 * KEYS = the entries (a list), the calls (a hash by id), their bytes (a counter);
 * ARGV = id, entry JSON, call JSON, most calls, most bytes.
 */
const APPEND_CALL = `
redis.call('RPUSH', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
local bytes = redis.call('INCRBY', KEYS[3], string.len(ARGV[3]))
while redis.call('LLEN', KEYS[1]) > tonumber(ARGV[4]) or bytes > tonumber(ARGV[5]) do
  local id = string.format('%d', cjson.decode(redis.call('LPOP', KEYS[1])).id)
  bytes = redis.call('DECRBY', KEYS[3], redis.call('HSTRLEN', KEYS[2], id))
  redis.call('HDEL', KEYS[2], id)
end
return bytes`;

export class RedisPlatformStore implements PlatformStore {
  readonly name = "redis";
  constructor(
    private readonly client: RedisClient,
    private readonly prefix = "provider-kit-platform",
  ) {}

  private key(...parts: string[]): string {
    return [this.prefix, ...parts].join(":");
  }

  async get<K extends Kind>(kind: K, key: string) {
    const value = await this.client.hGet(this.key(kind), key);
    return value == null ? undefined : (JSON.parse(value) as Records[K]);
  }

  async put<K extends Kind>(kind: K, key: string, value: Records[K]) {
    await this.client.hSet(this.key(kind), key, JSON.stringify(value));
  }

  async delete(kind: Kind, key: string) {
    return (await this.client.hDel(this.key(kind), key)) > 0;
  }

  async all<K extends Kind>(kind: K) {
    const values = await this.client.hVals(this.key(kind));
    return values.map((value) => JSON.parse(value) as Records[K]);
  }

  async append<L extends keyof Lists>(list: L, name: string, item: Lists[L], max: number) {
    const key = this.key(list, name);
    await this.client.multi().rPush(key, JSON.stringify(item)).lTrim(key, -max, -1).exec();
  }

  async items<L extends keyof Lists>(list: L, name: string) {
    const values = await this.client.lRange(this.key(list, name), 0, -1);
    return values.map((value) => JSON.parse(value) as Lists[L]);
  }

  async clear(list: keyof Lists, name: string) {
    await this.client.del(this.key(list, name));
  }

  private readonly timeline = ["entries", "calls", "bytes"].map((part) => this.key("timeline", part));

  async appendCall(entry: CallEntry, call: ProviderCall, bounds: TimelineBounds) {
    const args = [String(entry.id), JSON.stringify(entry), JSON.stringify(call), String(bounds.calls), String(bounds.bytes)];
    await this.client.eval(APPEND_CALL, { keys: this.timeline, arguments: args });
  }

  async callEntries() {
    const values = await this.client.lRange(this.timeline[0]!, 0, -1);
    return values.map((value) => JSON.parse(value) as CallEntry);
  }

  async calls(ids: readonly number[]) {
    if (ids.length === 0) return [];
    const values = await this.client.hmGet(this.timeline[1]!, ids.map(String));
    return values.flatMap((value) => (value == null ? [] : [JSON.parse(value) as ProviderCall]));
  }

  async clearCalls() {
    await this.client.del(this.timeline);
  }

  async next(counter: string) {
    return this.client.incr(this.key("counter", counter));
  }

  async ping() {
    await this.client.ping();
  }

  async close() {
    this.client.destroy();
  }
}
