/**
 * A store in Redis, shared by every replica of a provider: state survives restarts, calls on
 * one instance are serialised across processes, and each background step runs on one process.
 * It reaches one Redis server (`url`, `client`) or the primary a group of Redis Sentinels
 * names (`sentinel`), following it through a failover. The scripts are in `redis-scripts.ts`,
 * the connection handling in `redis-store-client.ts`.
 *
 * Key layout (`<p>` is the key prefix, default `provider-kit:`):
 *
 *   <p>instance:<name>   string  the instance record, JSON
 *   <p>bindings:<name>   hash    "<kind>:<key>" → binding record, JSON (kind: app, unit, job)
 *   <p>removed:<name>    string  "1": the instance was removed at the platform's request (expires; gone once the name is saved again)
 *   <p>pending           set     names of instances that owe a background step
 *   <p>lock:<name>       string  random token of the call holding the instance lock (expires)
 *   <p>lock-queue:<name> zset    token of each caller waiting for that lock → arrival, Redis time in µs (expires)
 *   <p>lock-lapse:<name> zset    the same tokens → when each lapses unless its waiter tries again (expires)
 *   <p>lease:<name>      string  id of the process running the instance's step (expires)
 *   <p>census            hash    "instance:<state>" / "binding:<kind>" → count, "counted" → 1
 *
 * Every write of an instance or its bindings is a script that first checks the lock still holds
 * its writer's token: a holder whose lock expired or was lost in a failover, and was then taken
 * by another caller, writes nothing (`LockLostError`).
 *
 * The census is kept by the same scripts that change instances and bindings, so it cannot
 * drift from them and a metrics scrape reads one hash. A store written by a version without it
 * has no "counted" field: the first census() counts everything once, in one script, and from
 * then on the scripts keep the counts.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import { ConfigurationError } from "provider-kit";
import type { BindingKind, BindingRecord, InstanceRecord, InstanceState } from "provider-kit";
import { KeyedMutex } from "provider-kit/store";
import {
  COUNT_CENSUS,
  DELETE_BINDING,
  DELETE_INSTANCE,
  LEAVE_LOCK_QUEUE,
  LOCK_LOST,
  RELEASE_IF_HOLDER,
  RENEW_IF_HOLDER,
  SAVE_BINDING,
  SAVE_INSTANCE,
  TAKE_LOCK_IN_TURN,
  TAKE_OR_RENEW,
  type FencedWrite,
} from "./redis-scripts.js";
import type { RedisStoreClient, SentinelAddress } from "../redis/connection.js";
import { DEFAULT_REPLICA_TIMEOUT_MS } from "../redis/replicas.js";
import { StoreClient, StoreTimeoutError } from "./redis-store-client.js";
import { keepRenewed } from "provider-kit/store";
import {
  bindingField,
  emptyCensus,
  HeldLock,
  LockLostError,
  LockTimeoutError,
  type InstanceWrites,
  type LockedInstance,
  type LockOptions,
  type Store,
  type StoreCensus,
  type WriteOptions,
} from "provider-kit/store";

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
  /**
   * Expiry of an instance lock, renewed every third of it while the call runs; a call whose
   * renewals fail for this long stops (its signal aborts, its writes are refused). Default 10 000 ms.
   */
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

/** First and longest pause between two tries to take a busy lock; the waiter next in line always tries again after the first. */
const LOCK_RETRY_MIN_MS = 10;
const LOCK_RETRY_MAX_MS = 50;
/**
 * A waiter's place in an instance's lock queue lapses this long after its latest try, so a
 * waiter whose process died holds the others back this long at most. Far above the pause
 * between two tries, so a waiter on a slow machine keeps its place.
 */
const LOCK_TICKET_TTL_MS = 2_000;

export class RedisStore implements Store {
  private readonly redis: StoreClient;
  private readonly prefix: string;
  private readonly lockTtlMs: number;
  private readonly commandTimeoutMs: number;
  /** This process's callers of one instance queue here, so only the first of them asks Redis for the lock. */
  private readonly localLocks = new KeyedMutex();
  private readonly log: Logger | undefined;

  constructor(options: RedisStoreOptions) {
    this.prefix = options.keyPrefix ?? "provider-kit:";
    this.lockTtlMs = options.lockTtlMs ?? 10_000;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 5_000;
    const waitForReplicas = options.waitForReplicas ?? 0;
    if (!Number.isInteger(waitForReplicas) || waitForReplicas < 0) {
      throw new ConfigurationError(`RedisStore: waitForReplicas must be a whole number of replicas, got ${waitForReplicas}.`);
    }
    this.log = options.log;
    this.redis = new StoreClient({
      connection: "client" in options ? { client: options.client } : "url" in options ? { url: options.url } : { sentinel: options.sentinel },
      connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
      commandTimeoutMs: this.commandTimeoutMs,
      waitForReplicas,
      replicaTimeoutMs: options.replicaTimeoutMs ?? DEFAULT_REPLICA_TIMEOUT_MS,
      log: options.log,
    });
  }

  /** The full name of a key of this store (see the key layout above). */
  private key(kind: "instance" | "bindings" | "removed" | "lock" | "lock-queue" | "lock-lapse" | "lease", name: string): string;
  private key(kind: "pending" | "census"): string;
  private key(kind: string, name?: string): string {
    return name === undefined ? `${this.prefix}${kind}` : `${this.prefix}${kind}:${name}`;
  }

  async getInstance(name: string): Promise<InstanceRecord | undefined> {
    const json = await this.redis.run((redis) => redis.get(this.key("instance", name)));
    return json === null ? undefined : (JSON.parse(json) as InstanceRecord);
  }

  async wasRemoved(name: string): Promise<boolean> {
    return (await this.redis.run((redis) => redis.exists(this.key("removed", name)))) === 1;
  }

  async listPendingSteps(): Promise<InstanceRecord[]> {
    const records = await this.redis.run(async (redis): Promise<Array<string | null>> => {
      const names = await redis.sMembers(this.key("pending"));
      return names.length === 0 ? [] : redis.mGet(names.map((name) => this.key("instance", name)));
    });
    return records
      .filter((json): json is string => json !== null)
      .map((json) => JSON.parse(json) as InstanceRecord)
      .filter((record) => record.step !== undefined);
  }

  async getBinding(instance: string, kind: BindingKind, key: string): Promise<BindingRecord | undefined> {
    const json = await this.redis.run((redis) => redis.hGet(this.key("bindings", instance), bindingField(kind, key)));
    return json == null ? undefined : (JSON.parse(json) as BindingRecord);
  }

  async listBindings(instance: string): Promise<BindingRecord[]> {
    const values = await this.redis.run((redis) => redis.hVals(this.key("bindings", instance)));
    return values.map((json) => JSON.parse(json) as BindingRecord);
  }

  /**
   * This process's callers of one instance queue locally (KeyedMutex), and the first asks Redis:
   * one script takes the lock under a fresh token and reads what the work needs, in turn with
   * the other processes' waiters (see TAKE_LOCK_IN_TURN). The lock is
   * renewed while the work runs; a renewal that finds it taken, or renewals failing for a whole
   * `lockTtlMs`, lose it (the work's signal aborts), and so does `holdUntil`. Each write checks
   * the token in its own script, so none lands once another caller holds the lock.
   */
  async withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, options: LockOptions = {}): Promise<T> {
    const deadline = Date.now() + waitMs;
    const releaseHere = await this.localLocks.lock(instance, waitMs);
    const token = randomUUID();
    const lockKey = this.key("lock", instance);
    const field = options.binding && bindingField(options.binding.kind, options.binding.key);
    const taken = await this.lockAndRead(instance, token, deadline, field).catch((error: unknown) => {
      releaseHere();
      throw error;
    });
    // Set once a last write let the lock go with it: nothing left to release.
    let releasedByWrite = false;
    const held = new HeldLock(
      instance,
      taken.record,
      taken.binding,
      this.writesOf(instance, token, {
        sending: () => stopRenewing(),
        // The next local caller's lock script queues behind this write on the same connection, so
        // it finds the lock free without waiting a round trip for this call to end.
        sent: () => releaseHere(),
        released: () => (releasedByWrite = true),
      }),
    );
    const stopRenewing = keepRenewed({
      renew: async () => (await this.redis.script(RENEW_IF_HOLDER, [lockKey], [token, String(this.lockTtlMs)])) === 1,
      ttlMs: this.lockTtlMs,
      takenAt: taken.sentAt,
      lost: () => held.lose(),
      failed: (error) => this.log?.warn({ err: error, instance }, "could not renew an instance lock; retrying"),
    });
    let letGone = false;
    return held.hold(work, options.holdUntil, () => {
      if (letGone) return;
      letGone = true;
      stopRenewing();
      // Not awaited: if Redis is unreachable now, the lock simply expires; the call answers without waiting.
      if (!releasedByWrite) this.redis.script(RELEASE_IF_HOLDER, [lockKey], [token]).catch(() => {});
      releaseHere();
    });
  }

  /**
   * Take the Redis lock in turn and read what the work needs in one script, tried again with
   * back-off while another caller holds it or is ahead in its queue. Resolves with the reads and
   * when the successful try was sent. A waiter that gives up withdraws from the queue.
   */
  private async lockAndRead(
    instance: string,
    token: string,
    deadline: number,
    field: string | undefined,
  ): Promise<{ record: InstanceRecord | undefined; binding: BindingRecord | undefined; sentAt: number }> {
    const queueKeys = [this.key("lock-queue", instance), this.key("lock-lapse", instance)];
    const keys = [this.key("lock", instance), ...queueKeys, this.key("instance", instance), this.key("bindings", instance)];
    const args = [token, String(this.lockTtlMs), String(LOCK_TICKET_TTL_MS), ...(field === undefined ? [] : [field])];
    const giveUp = (error: unknown): never => {
      // Not awaited: if Redis is unreachable now, the ticket simply lapses.
      this.redis.script(LEAVE_LOCK_QUEUE, queueKeys, [token]).catch(() => {});
      throw error;
    };
    let pause = LOCK_RETRY_MIN_MS;
    for (;;) {
      const sentAt = Date.now();
      // Even with Redis away, the wait for the lock ends at the caller's deadline.
      const remainingMs = Math.max(1, Math.min(this.commandTimeoutMs, deadline - sentAt));
      const read = (await this.redis.script(TAKE_LOCK_IN_TURN, keys, args, remainingMs).catch((error: unknown) =>
        // A try cut short by the wait's end, not by commandTimeoutMs: the wait ran out behind another call.
        // Any other failure (READONLY from a demoted primary...) is what it is.
        giveUp(remainingMs < this.commandTimeoutMs && error instanceof StoreTimeoutError ? new LockTimeoutError(instance, { cause: error }) : error),
      )) as string[] | number;
      if (typeof read !== "number") {
        const [record = "", binding = ""] = read;
        return {
          record: record === "" ? undefined : (JSON.parse(record) as InstanceRecord),
          binding: binding === "" ? undefined : (JSON.parse(binding) as BindingRecord),
          sentAt,
        };
      }
      // `read` counts the waiters ahead of this one: the next in line keeps trying at the shortest pause.
      if (read === 0) pause = LOCK_RETRY_MIN_MS;
      if (Date.now() + pause > deadline) giveUp(new LockTimeoutError(instance));
      await sleep(pause);
      pause = Math.min(pause * 2, LOCK_RETRY_MAX_MS);
    }
  }

  /**
   * The instance's writes, each fenced by the lock's `token` in its script. A `last` write lets
   * the lock go in the same script: renewals stop as it is sent (`lastWrite.sending`), this
   * process's next caller may try for the lock once it is on its way (`lastWrite.sent`), and once
   * it has landed (`lastWrite.released`) the hold's end releases nothing more.
   */
  private writesOf(instance: string, token: string, lastWrite: { sending(): void; sent(): void; released(): void }): InstanceWrites {
    const lockKey = this.key("lock", instance);
    const run = async (write: FencedWrite, keys: string[], args: string[], options: WriteOptions | undefined): Promise<number> => {
      if (options?.last) lastWrite.sending();
      const writing = this.redis.durableScript(options?.last ? write.last : write.plain, keys, args);
      if (options?.last) lastWrite.sent();
      const answer = await writing;
      if (answer === LOCK_LOST) throw new LockLostError(instance);
      if (options?.last) lastWrite.released();
      return answer;
    };
    return {
      saveInstance: async (record, options) => {
        const keys = [lockKey, this.key("instance", instance), this.key("pending"), this.key("census"), this.key("removed", instance)];
        await run(SAVE_INSTANCE, keys, [token, JSON.stringify(record), record.step ? "1" : "0", instance, record.state], options);
      },
      deleteInstance: async (options) => {
        const keys = [
          lockKey,
          this.key("instance", instance),
          this.key("bindings", instance),
          this.key("pending"),
          this.key("census"),
          this.key("removed", instance),
        ];
        await run(DELETE_INSTANCE, keys, [token, instance, String(Math.ceil(options?.tombstoneMs ?? 0))], options);
      },
      saveBinding: async (binding, options) => {
        const keys = [lockKey, this.key("bindings", instance), this.key("census")];
        await run(SAVE_BINDING, keys, [token, bindingField(binding.kind, binding.key), binding.kind, JSON.stringify(binding)], options);
      },
      deleteBinding: async ({ kind, key }, options) => {
        const keys = [lockKey, this.key("bindings", instance), this.key("census")];
        return (await run(DELETE_BINDING, keys, [token, bindingField(kind, key), kind], options)) === 1;
      },
    };
  }

  async acquireLease(name: string, owner: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.script(TAKE_OR_RENEW, [this.key("lease", name)], [owner, String(Math.ceil(ttlMs))])) === 1;
  }

  async releaseLease(name: string, owner: string): Promise<void> {
    await this.redis.script(RELEASE_IF_HOLDER, [this.key("lease", name)], [owner]);
  }

  /**
   * Whether this store's Redis keeps anything across its own restart: with no RDB save point and
   * no AOF, a restart empties it, and the registry with it. A Redis that refuses CONFIG (managed
   * services often rename it) is not judged.
   */
  async persistenceWarning(): Promise<string | undefined> {
    const config = await this.redis.run(async (redis) => ({ ...(await redis.configGet("save")), ...(await redis.configGet("appendonly")) }));
    if (config.save === undefined || config.appendonly === undefined) return undefined;
    if (config.save.trim() !== "" || config.appendonly !== "no") return undefined;
    return (
      "The RedisStore's Redis persists nothing (no RDB save points, appendonly no): when that Redis restarts, every instance " +
      "and binding the provider knows is lost, later calls on them answer 404, and their resources and credentials are left " +
      "behind. Turn on AOF (appendonly yes) or RDB snapshots (save) on that Redis; see docs/operations/redis-store.md."
    );
  }

  /** One hash read (see the key layout); the first census of a store without one counts it. */
  async census(): Promise<StoreCensus> {
    const censusKey = this.key("census");
    let counts = await this.redis.run((redis) => redis.hGetAll(censusKey));
    if (counts.counted === undefined) {
      const pattern = this.prefix.replace(/[*?[\]\\]/g, "\\$&");
      await this.redis.script(COUNT_CENSUS, [censusKey], [pattern]);
      counts = await this.redis.run((redis) => redis.hGetAll(censusKey));
    }
    const census = emptyCensus();
    for (const state of Object.keys(census.instances) as InstanceState[]) census.instances[state] = Number(counts[`instance:${state}`] ?? 0);
    for (const kind of Object.keys(census.bindings) as BindingKind[]) census.bindings[kind] = Number(counts[`binding:${kind}`] ?? 0);
    return census;
  }

  close(): Promise<void> {
    return this.redis.close();
  }
}
