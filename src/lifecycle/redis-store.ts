/**
 * A store in Redis, shared by every replica of a provider: state survives restarts, calls on
 * one instance are serialised across processes, and each background step runs on one process.
 *
 * Key layout (`<p>` is the key prefix, default `provider-kit:`):
 *
 *   <p>instance:<name>   string  the instance record, JSON
 *   <p>bindings:<name>   hash    "<kind>:<key>" → binding record, JSON (kind: app, unit, job)
 *   <p>pending           set     names of instances that owe a background step
 *   <p>lock:<name>       string  random token of the call holding the instance lock (expires)
 *   <p>lease:<name>      string  id of the process running the instance's step (expires)
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { createClient, type RedisClientType } from "redis";
import { ProviderError } from "../errors.js";
import type { BindingKind, BindingRecord, InstanceRecord } from "../types.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { emptyCensus, LockTimeoutError, type Store, type StoreCensus } from "./store.js";

export type RedisStoreOptions = (
  | {
      /** `redis://[[user]:password@]host[:port][/db]`; the store opens and closes its own client. */
      url: string;
    }
  | {
      /** A client of yours (opened on first use if it is not yet); the store never closes it. */
      client: RedisClientType;
    }
) & {
  /** Prepended to every key, so one Redis can hold several providers or other data. Default `"provider-kit:"`. */
  keyPrefix?: string;
  /** Expiry of an instance lock, renewed every third of it while the call runs. Default 10 000 ms. */
  lockTtlMs?: number;
  /** How long a call waits for Redis to be reachable before failing with 503. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /** Where connection errors of the store's own client go. Default: nowhere (the calls that fail report them). */
  log?: Logger;
};

// Scripts make check-and-write atomic: a lock or lease is only touched by the one who holds it.
const INSERT_INSTANCE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  if ARGV[2] == '1' then redis.call('SADD', KEYS[2], ARGV[3]) end
  return 1
end
return 0`;
const RENEW_IF_HOLDER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE_IF_HOLDER = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
const TAKE_OR_RENEW = `
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`;

/** 503: the store's Redis cannot be reached; the call changed nothing. */
export class StoreUnavailableError extends ProviderError {
  constructor() {
    super("The provider cannot reach its state store (Redis) right now; try again in a moment.", 503);
  }
}

/** First and longest pause between two tries to take a busy lock. */
const LOCK_RETRY_MIN_MS = 10;
const LOCK_RETRY_MAX_MS = 50;

const bindingField = (kind: BindingKind, key: string) => `${kind}:${key}`;

export class RedisStore implements Store {
  private readonly client: RedisClientType;
  private readonly ownsClient: boolean;
  private readonly prefix: string;
  private readonly lockTtlMs: number;
  private readonly localLocks = new KeyedMutex();
  private readonly connectTimeoutMs: number;
  private readonly log: Logger | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.keyPrefix ?? "provider-kit:";
    this.lockTtlMs = options.lockTtlMs ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.log = options.log;
    if ("client" in options) {
      this.client = options.client;
      this.ownsClient = false;
    } else {
      // Fail calls at once while Redis is unreachable, rather than hold them until the platform gives up.
      this.client = createClient({ url: options.url, disableOfflineQueue: true });
      this.ownsClient = true;
      this.client.on("error", (error: unknown) => this.log?.warn({ err: error }, "Redis store connection error"));
    }
  }

  /** The full name of a key of this store (see the key layout above). */
  private key(kind: "instance" | "bindings" | "lock" | "lease", name: string): string;
  private key(kind: "pending"): string;
  private key(kind: string, name?: string): string {
    return name === undefined ? `${this.prefix}${kind}` : `${this.prefix}${kind}:${name}`;
  }

  /**
   * The client once it is ready. While Redis is unreachable the client keeps reconnecting and a
   * call would hang until the platform gives up; it waits `connectTimeoutMs`, then fails clearly.
   */
  private async redis(): Promise<RedisClientType> {
    if (!this.client.isOpen) {
      // Its promise settles only once connected; `ready` below is what callers wait for.
      this.client.connect().catch((error: unknown) => this.log?.warn({ err: error }, "Redis store could not connect"));
    }
    if (this.client.isReady) return this.client;
    const becameReady = await new Promise<boolean>((resolve) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.client.off("ready", onReady);
        resolve(false);
      }, this.connectTimeoutMs);
      this.client.once("ready", onReady);
    });
    if (!becameReady) throw new StoreUnavailableError();
    return this.client;
  }

  private async script(source: string, keys: string[], args: string[]): Promise<number> {
    return Number(await (await this.redis()).eval(source, { keys, arguments: args }));
  }

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    const json = await (await this.redis()).get(this.key("instance", name));
    return json === null ? undefined : (JSON.parse(json) as InstanceRecord);
  }

  async insertInstance(record: InstanceRecord): Promise<boolean> {
    const keys = [this.key("instance", record.name), this.key("pending")];
    return (await this.script(INSERT_INSTANCE, keys, [JSON.stringify(record), record.step ? "1" : "0", record.name])) === 1;
  }

  async saveInstance(record: InstanceRecord): Promise<void> {
    const transaction = (await this.redis()).multi().set(this.key("instance", record.name), JSON.stringify(record));
    if (record.step) transaction.sAdd(this.key("pending"), record.name);
    else transaction.sRem(this.key("pending"), record.name);
    await transaction.exec();
  }

  async deleteInstance(name: string): Promise<void> {
    await (await this.redis())
      .multi()
      .del([this.key("instance", name), this.key("bindings", name)])
      .sRem(this.key("pending"), name)
      .exec();
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    const redis = await this.redis();
    const names = await redis.sMembers(this.key("pending"));
    if (names.length === 0) return [];
    const records = await redis.mGet(names.map((name) => this.key("instance", name)));
    return records
      .filter((json): json is string => json !== null)
      .map((json) => JSON.parse(json) as InstanceRecord)
      .filter((record) => record.step !== undefined);
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    const json = await (await this.redis()).hGet(this.key("bindings", instance), bindingField(kind, key));
    return json == null ? undefined : (JSON.parse(json) as BindingRecord);
  }

  async saveBinding(binding: BindingRecord): Promise<void> {
    await (await this.redis()).hSet(
      this.key("bindings", binding.instance),
      bindingField(binding.kind, binding.key),
      JSON.stringify(binding),
    );
  }

  async deleteBinding(instance: string, kind: BindingKind, key: string): Promise<boolean> {
    return (await (await this.redis()).hDel(this.key("bindings", instance), bindingField(kind, key))) > 0;
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    const values = await (await this.redis()).hVals(this.key("bindings", instance));
    return values.map((json) => JSON.parse(json) as BindingRecord);
  }

  withLock<T>(instance: string, waitMs: number, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    // This process's callers queue here first; only the head of the queue polls Redis.
    return this.localLocks.hold(instance, waitMs, () => this.holdRedisLock(instance, deadline, work));
  }

  private async holdRedisLock<T>(instance: string, deadline: number, work: () => Promise<T>): Promise<T> {
    const redis = await this.redis();
    const lockKey = this.key("lock", instance);
    const token = randomUUID();
    let pause = LOCK_RETRY_MIN_MS;
    for (;;) {
      const taken = await redis.set(lockKey, token, { condition: "NX", expiration: { type: "PX", value: this.lockTtlMs } });
      if (taken !== null) break;
      if (Date.now() + pause > deadline) throw new LockTimeoutError(instance);
      await sleep(pause);
      pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
    }
    // Renewed while the work runs, so a slow handler keeps the lock; a dead process stops renewing.
    const renewal = setInterval(() => {
      this.script(RENEW_IF_HOLDER, [lockKey], [token, String(this.lockTtlMs)]).catch(() => {
        // A missed renewal is retried at the next tick; the lock only lapses after a whole ttl.
      });
    }, this.lockTtlMs / 3);
    try {
      return await work();
    } finally {
      clearInterval(renewal);
      // If Redis is unreachable now, the lock simply expires: the work's own outcome matters more.
      await this.script(RELEASE_IF_HOLDER, [lockKey], [token]).catch(() => {});
    }
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.script(TAKE_OR_RENEW, [this.key("lease", name)], [owner, String(Math.ceil(ttlMs))])) === 1;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.script(RELEASE_IF_HOLDER, [this.key("lease", name)], [owner]);
  }

  /** Walks every instance and binding key (SCAN, in pages): one scrape costs O(instances + bindings). */
  async census(): Promise<StoreCensus> {
    const redis = await this.redis();
    const census = emptyCensus();
    for await (const keys of redis.scanIterator({ MATCH: this.key("instance", "*"), COUNT: 1000 })) {
      if (keys.length === 0) continue;
      for (const json of await redis.mGet(keys)) {
        if (json !== null) census.instances[(JSON.parse(json) as InstanceRecord).state] += 1;
      }
    }
    for await (const keys of redis.scanIterator({ MATCH: this.key("bindings", "*"), COUNT: 1000 })) {
      for (const fields of await Promise.all(keys.map((key) => redis.hKeys(key)))) {
        for (const field of fields) census.bindings[field.slice(0, field.indexOf(":")) as BindingKind] += 1;
      }
    }
    return census;
  }

  async close(): Promise<void> {
    if (!this.ownsClient || !this.client.isOpen) return;
    // A client still trying to reach Redis has nothing to flush: stop its reconnecting at once.
    if (this.client.isReady) await this.client.close();
    else this.client.destroy();
  }
}
