/**
 * State in Redis: one hash per kind (`<prefix>:<kind>`, field = key, value = JSON), one capped
 * list per log, one key per counter. With the embedded server's append-only file, a restart of
 * the platform loses nothing.
 */
import type { RedisClient } from "../../redis/connection.js";
import type { Kind, Lists, Records, PlatformStore } from "./store.js";

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
