/**
 * A store in Redis, shared by every replica of a provider: state survives restarts, calls on
 * one instance are serialised across processes, and each background step runs on one process.
 * It reaches one Redis server (`url`, `client`) or the primary a group of Redis Sentinels
 * names (`sentinel`), following it through a failover.
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
import type { RedisClientType, RedisSentinelType } from "redis";
import { isTransientReply, nodeRedis } from "../redis/connection.js";
import { ProviderError } from "../errors.js";
import { ConfigurationError } from "../options.js";
import type { BindingKind, BindingRecord, InstanceRecord } from "../types.js";
import { KeyedMutex } from "./keyed-mutex.js";
import { emptyCensus, LockTimeoutError, type Store, type StoreCensus } from "./store.js";

/** A Redis primary found through Redis Sentinel. */
export interface SentinelAddress {
  /** The name the sentinels monitor the primary under (`sentinel monitor <name> ...`). */
  name: string;
  /** Some of the sentinels (three is plenty): any one that answers tells where the primary is. */
  sentinels: Array<{ host: string; port: number }>;
  /** Credentials of the Redis servers (primary and replicas), not of the sentinels. */
  username?: string;
  password?: string;
}

/** A client of a single server or of a Sentinel-managed primary. */
export type RedisStoreClient = RedisClientType | RedisSentinelType;

export type RedisStoreOptions = (
  | {
      /** `redis://[[user]:password@]host[:port][/db]`; the store opens and closes its own client. */
      url: string;
    }
  | {
      /** Follow the primary these sentinels name; the store opens and closes its own client. */
      sentinel: SentinelAddress;
    }
  | {
      /** A client of yours (opened on first use if it is not yet); the store never closes it. */
      client: RedisStoreClient;
    }
) & {
  /** Prepended to every key, so one Redis can hold several providers or other data. Default `"provider-kit:"`. */
  keyPrefix?: string;
  /** Expiry of an instance lock, renewed every third of it while the call runs. Default 10 000 ms. */
  lockTtlMs?: number;
  /** How long a call waits for Redis to be reachable before failing with 503. Default 5 000 ms. */
  connectTimeoutMs?: number;
  /**
   * Longest one store operation may take, waiting for Redis to come back or for a failover to
   * finish included, before its call fails with 503 (a write may still land). Default 5 000 ms.
   */
  commandTimeoutMs?: number;
  /**
   * Replicas that must have each instance and binding write (Redis `WAIT`) before the call
   * succeeds, so that a write the provider acknowledged survives the loss of the primary.
   * Costs a round trip to a replica on every write; with none connected, writes fail with 503.
   * The store then writes through a connection of its own (a duplicate of its client), so that
   * waiting writes never hold back reads and locks. Default 0 (acknowledged once the primary
   * has it). Locks and leases are never waited for.
   */
  waitForReplicas?: number;
  /** How long a write waits for those replicas before its call fails with 503. Default 1 000 ms. */
  replicaTimeoutMs?: number;
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
const SAVE_INSTANCE = `
redis.call('SET', KEYS[1], ARGV[1])
if ARGV[2] == '1' then redis.call('SADD', KEYS[2], ARGV[3]) else redis.call('SREM', KEYS[2], ARGV[3]) end
return 1`;
const DELETE_INSTANCE = `
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('SREM', KEYS[3], ARGV[1])
return 1`;
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
const SAVE_BINDING = `return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])`;
const DELETE_BINDING = `return redis.call('HDEL', KEYS[1], ARGV[1])`;

/** 503: the store's Redis cannot be reached, or did not answer in time; the call may be retried. */
export class StoreUnavailableError extends ProviderError {
  constructor(options?: ErrorOptions) {
    super("The provider cannot reach its state store (Redis) right now; try again in a moment.", 503, options);
  }
}

/** 503: the primary has the write, but not enough replicas confirmed it in time to call it safe. */
export class ReplicaWaitError extends ProviderError {
  constructor(confirmed: number, wanted: number) {
    super(
      `The provider's state store (Redis) confirmed the write on ${confirmed} of ${wanted} replicas in time; try again in a moment.`,
      503,
    );
  }
}

/** A failure of Redis rather than of the store's own code, as the 503 it answers. */
function asUnavailable(error: unknown): unknown {
  if (error instanceof ProviderError) return error;
  // A reply that reveals a bug stays what it is; a pipeline (a write and its WAIT) fails as a whole.
  if (error instanceof nodeRedis().ErrorReply && !isTransientReply(error)) return error;
  return new StoreUnavailableError({ cause: error });
}

/** First and longest pause between two tries to take a busy lock. */
const LOCK_RETRY_MIN_MS = 10;
const LOCK_RETRY_MAX_MS = 50;

const bindingField = (kind: BindingKind, key: string) => `${kind}:${key}`;

export class RedisStore implements Store {
  private readonly client: RedisStoreClient;
  /**
   * The connection instance and binding writes go through: the same client, or with
   * `waitForReplicas` one of their own, since a `WAIT` holds back every later command of its
   * connection until the replicas answer (up to `replicaTimeoutMs` when none does).
   */
  private readonly writer: RedisStoreClient;
  /** The clients the store opened, and so closes. */
  private readonly owned: RedisStoreClient[] = [];
  private readonly prefix: string;
  private readonly lockTtlMs: number;
  private readonly localLocks = new KeyedMutex();
  private readonly connectTimeoutMs: number;
  private readonly commandTimeoutMs: number;
  private readonly waitForReplicas: number;
  private readonly replicaTimeoutMs: number;
  private readonly log: Logger | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.keyPrefix ?? "provider-kit:";
    this.lockTtlMs = options.lockTtlMs ?? 10_000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5_000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 5_000;
    this.waitForReplicas = options.waitForReplicas ?? 0;
    if (!Number.isInteger(this.waitForReplicas) || this.waitForReplicas < 0) {
      throw new ConfigurationError(`RedisStore: waitForReplicas must be a whole number of replicas, got ${this.waitForReplicas}.`);
    }
    this.replicaTimeoutMs = options.replicaTimeoutMs ?? 1_000;
    this.log = options.log;
    if ("client" in options) this.client = options.client;
    else this.client = this.own("url" in options ? ownClient(options.url) : ownSentinelClient(options.sentinel));
    this.writer = this.waitForReplicas > 0 ? this.own(this.client.duplicate()) : this.client;
  }

  private own(client: RedisStoreClient): RedisStoreClient {
    client.on("error", (error: unknown) => this.log?.warn({ err: error }, "Redis store connection error"));
    this.owned.push(client);
    return client;
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
  private async ready(client: RedisStoreClient): Promise<RedisStoreClient> {
    if (!client.isOpen) {
      // Its promise settles only once connected; `ready` below is what callers wait for.
      client.connect().catch((error: unknown) => this.log?.warn({ err: error }, "Redis store could not connect"));
    }
    if (client.isReady) return client;
    const becameReady = await new Promise<boolean>((resolve) => {
      const onReady = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        client.off("ready", onReady);
        resolve(false);
      }, this.connectTimeoutMs);
      client.once("ready", onReady);
    });
    if (!becameReady) throw new StoreUnavailableError();
    return client;
  }

  /**
   * Runs one store operation on a ready client (default: the main one), for at most `timeoutMs`.
   * Whatever Redis does wrong (unreachable, a connection lost mid-command, a failover that
   * outlasts it) ends as a 503.
   */
  private async run<T>(
    operation: (redis: RedisStoreClient) => Promise<T>,
    { timeoutMs = this.commandTimeoutMs, client = this.client } = {},
  ): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`Redis did not answer within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.ready(client).then(operation), timedOut]);
    } catch (error) {
      throw asUnavailable(error);
    } finally {
      clearTimeout(timer);
    }
  }

  private script(source: string, keys: string[], args: string[]): Promise<number> {
    return this.run(async (redis) => Number(await redis.eval(source, { keys, arguments: args })));
  }

  /**
   * Runs a script that changes instances or bindings and, with `waitForReplicas`, waits for
   * the replicas in the same pipeline: `WAIT` counts the writes of its own connection, and a
   * Sentinel client that retries after a failover retries both together.
   */
  private durableScript(source: string, keys: string[], args: string[]): Promise<number> {
    if (this.waitForReplicas === 0) return this.script(source, keys, args);
    return this.run(
      async (redis) => {
        const [result, confirmed] = await redis
          .multi()
          .eval(source, { keys, arguments: args })
          .wait(this.waitForReplicas, this.replicaTimeoutMs)
          .execAsPipeline();
        if (Number(confirmed) < this.waitForReplicas) throw new ReplicaWaitError(Number(confirmed), this.waitForReplicas);
        return Number(result);
      },
      { client: this.writer },
    );
  }

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    const json = await this.run((redis) => redis.get(this.key("instance", name)));
    return json === null ? undefined : (JSON.parse(json) as InstanceRecord);
  }

  async insertInstance(record: InstanceRecord): Promise<boolean> {
    const keys = [this.key("instance", record.name), this.key("pending")];
    return (await this.durableScript(INSERT_INSTANCE, keys, [JSON.stringify(record), record.step ? "1" : "0", record.name])) === 1;
  }

  async saveInstance(record: InstanceRecord): Promise<void> {
    const keys = [this.key("instance", record.name), this.key("pending")];
    await this.durableScript(SAVE_INSTANCE, keys, [JSON.stringify(record), record.step ? "1" : "0", record.name]);
  }

  async deleteInstance(name: string): Promise<void> {
    await this.durableScript(DELETE_INSTANCE, [this.key("instance", name), this.key("bindings", name), this.key("pending")], [name]);
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    const records = await this.run(async (redis): Promise<Array<string | null>> => {
      const names = await redis.sMembers(this.key("pending"));
      return names.length === 0 ? [] : redis.mGet(names.map((name) => this.key("instance", name)));
    });
    return records
      .filter((json): json is string => json !== null)
      .map((json) => JSON.parse(json) as InstanceRecord)
      .filter((record) => record.step !== undefined);
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    const json = await this.run((redis) => redis.hGet(this.key("bindings", instance), bindingField(kind, key)));
    return json == null ? undefined : (JSON.parse(json) as BindingRecord);
  }

  async saveBinding(binding: BindingRecord): Promise<void> {
    const field = bindingField(binding.kind, binding.key);
    await this.durableScript(SAVE_BINDING, [this.key("bindings", binding.instance)], [field, JSON.stringify(binding)]);
  }

  async deleteBinding(instance: string, kind: BindingKind, key: string): Promise<boolean> {
    return (await this.durableScript(DELETE_BINDING, [this.key("bindings", instance)], [bindingField(kind, key)])) > 0;
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    const values = await this.run((redis) => redis.hVals(this.key("bindings", instance)));
    return values.map((json) => JSON.parse(json) as BindingRecord);
  }

  withLock<T>(instance: string, waitMs: number, work: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    // This process's callers queue here first; only the head of the queue polls Redis.
    return this.localLocks.hold(instance, waitMs, () => this.holdRedisLock(instance, deadline, work));
  }

  private async holdRedisLock<T>(instance: string, deadline: number, work: () => Promise<T>): Promise<T> {
    const lockKey = this.key("lock", instance);
    const token = randomUUID();
    let pause = LOCK_RETRY_MIN_MS;
    for (;;) {
      // Even with Redis away, the wait for the lock ends at the caller's deadline.
      const remainingMs = Math.max(1, Math.min(this.commandTimeoutMs, deadline - Date.now()));
      const taken = await this.run(
        (redis) => redis.set(lockKey, token, { condition: "NX", expiration: { type: "PX", value: this.lockTtlMs } }),
        { timeoutMs: remainingMs },
      );
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
      // Not awaited: the next holder's commands follow it on the same connection anyway, and if
      // Redis is unreachable now the lock simply expires; the call answers without waiting.
      this.script(RELEASE_IF_HOLDER, [lockKey], [token]).catch(() => {});
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
    return this.run(async (redis) => {
      // SCAN by hand: a Sentinel client has no scanIterator.
      const eachPage = async (pattern: string, read: (keys: string[]) => Promise<void>) => {
        let cursor = "0";
        do {
          const page = await redis.scan(cursor, { MATCH: pattern, COUNT: 1000 });
          cursor = String(page.cursor);
          if (page.keys.length > 0) await read(page.keys);
        } while (cursor !== "0");
      };
      const census = emptyCensus();
      await eachPage(this.key("instance", "*"), async (keys) => {
        for (const json of await redis.mGet(keys)) {
          if (json !== null) census.instances[(JSON.parse(json) as InstanceRecord).state] += 1;
        }
      });
      await eachPage(this.key("bindings", "*"), async (keys) => {
        for (const fields of await Promise.all(keys.map((key) => redis.hKeys(key)))) {
          for (const field of fields) census.bindings[field.slice(0, field.indexOf(":")) as BindingKind] += 1;
        }
      });
      return census;
    });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.owned.map(async (client) => {
        if (!client.isOpen) return;
        // A client still trying to reach Redis has nothing to flush: stop its reconnecting at once.
        if (client.isReady) await client.close();
        else await client.destroy();
      }),
    );
  }
}

// Both fail calls at once while Redis is unreachable, rather than hold them until the platform gives up.
function ownClient(url: string): RedisStoreClient {
  return nodeRedis().createClient({ url, disableOfflineQueue: true });
}

function ownSentinelClient(address: SentinelAddress): RedisStoreClient {
  return nodeRedis().createSentinel({
    name: address.name,
    sentinelRootNodes: address.sentinels,
    nodeClientOptions: { username: address.username, password: address.password, disableOfflineQueue: true },
    sentinelClientOptions: { disableOfflineQueue: true },
  });
}
