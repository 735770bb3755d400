/**
 * The shared server's ACL users, kept durable by a journal in the registry instead of by an
 * `ACL SAVE` per change. A save blocks the server while Redis describes every user changed since
 * the last one and writes them all: a bind that waited for its own save, inside the instance
 * lock, could never share one and got slower as users grew.
 *
 * A change (a user set or deleted) is made on the shared server, then recorded in the journal, a
 * stream in the registry (whose writes are as durable as a binding's), and the call answers. The
 * ACL file is saved in the background, paced, and the journal entries a save covers are removed.
 * Each entry carries the `run_id` of the server process the change was made on: a save covers an
 * entry only when it ran on that same process, after the entry was written. When the shared
 * server restarts without having saved some changes, their entries name a process that is gone,
 * and are applied again (under the instance's lock, in order) before they can be removed. So
 * nothing a caller was told is lost when the shared server, the provider, or both crash;
 * start-up reads one entry when there is nothing to replay, whatever the number of users.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Logger } from "pino";
import type { Store } from "provider-kit";
import type { RedisStoreClient } from "@provider-kit/redis-store";
import { afterReplicas, DEFAULT_REPLICA_TIMEOUT_MS } from "@provider-kit/redis-store/replicas";
import type { RedisClient } from "@provider-kit/redis-store/connection";
import { aclPasswordHash } from "@provider-kit/platform/redis-server";
import { hasAclFile, oneRunAtATime } from "./acl.js";
import { userPrefix } from "./key-space.js";

/** What the journal records of one change, enough to make it again. */
type AclChange =
  /** `passwordHashes` oldest first (a rotation adds one); `passwordHash`: an entry written before rotations kept two. */
  | { op: "set"; user: string; passwordHashes?: readonly string[]; passwordHash?: string; rules: readonly string[] }
  | { op: "delete"; user: string }
  /** Every user of the instance (named under its user prefix, key-space.ts): its destroy. */
  | { op: "delete-instance"; instance: string };

interface JournalEntry {
  id: string;
  instance: string;
  change: AclChange;
  /** `run_id` of the shared server process the change was made on. */
  server: string;
}

export interface AclJournalOptions {
  /** The shared server, as its administrator. */
  admin: RedisClient;
  /** The registry's server, where the journal lives. */
  registry: RedisStoreClient;
  /** The journal's key (a stream). */
  key: string;
  /** Replicas each entry must reach before a change counts as made (Sentinel mode), as the registry's own writes. */
  waitForReplicas?: number;
  /** The registry's instance locks: a replay of an instance's changes never interleaves with a call on it. */
  store: Pick<Store, "withLock">;
  /** Least time between two saves of the ACL file, unless SAVE_AFTER_CHANGES changes wait. */
  saveIntervalMs: number;
  log: Logger;
}

/**
 * A save starts once this many changes wait, interval or not. ACL SAVE blocks every tenant of
 * the shared server while it describes each changed user: the cap bounds that stall, and how
 * often a stream of binds meets one (docs/benchmarks.md has the measured cost).
 */
const SAVE_AFTER_CHANGES = 500;
/** How long a replay waits for an instance's lock; a retry follows if it is not free by then. */
const REPLAY_LOCK_WAIT_MS = 10_000;
/** Pause before trying again a save or replay that failed (a server away). */
const RETRY_MS = 1_000;

/**
 * Lua, on the registry: remove the entries up to ARGV[1] that were made on the server process
 * the save ran on (ARGV[2]); count the others, which that save may not cover.
 */
const REMOVE_SAVED = `
local stale = 0
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], '-', ARGV[1])) do
  local fields, server = entry[2], nil
  for i = 1, #fields, 2 do if fields[i] == 'server' then server = fields[i + 1] end end
  if server == ARGV[2] then redis.call('XDEL', KEYS[1], entry[1]) else stale = stale + 1 end
end
return stale`;

function runIdOf(info: unknown): string {
  const runId = /^run_id:(\w+)/m.exec(String(info))?.[1];
  if (runId === undefined) throw new Error("The shared Redis server's INFO has no run_id.");
  return runId;
}

export class AclJournal {
  private readonly options: AclJournalOptions;
  private readonly saveInBackground: () => Promise<void>;
  /** When the last save ended, which the next one is paced from. */
  private lastSaveEndedAt = Date.now();
  /** Changes made here since the last save read the journal. */
  private waiting = 0;
  /** The next save runs without waiting for its turn: the server restarted, many changes wait, or the provider stops. */
  private promptly = false;
  /** Ends the wait of a save for its turn. */
  private wake: AbortController | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(options: AclJournalOptions) {
    this.options = options;
    this.saveInBackground = oneRunAtATime(() => this.saveCycle());
    // A reconnection may be to a restarted server that lost unsaved changes: replay them now.
    options.admin.on("ready", () => void this.saveSoon(true));
  }

  /** At start-up: saves (and replays) what an earlier run left in the journal; retried in the background if it fails. */
  start(): Promise<void> {
    return this.saveSoon(true);
  }

  /**
   * Made again, if the shared server lost them (it restarted before saving them), the changes of
   * `instance` it still lacks; true when there were any. A status check that finds a user
   * missing waits on this before calling the instance down.
   */
  async restoreLost(instance: string): Promise<boolean> {
    const server = runIdOf(await this.options.admin.info("server"));
    const lost = (await this.entries()).some((entry) => entry.instance === instance && entry.server !== server);
    if (lost) await this.saveSoon(true);
    return lost;
  }

  /** Creates the user or resets it completely, with this password and these ACL rules. */
  setUser(instance: string, user: string, password: string, rules: readonly string[]): Promise<void> {
    return this.setUserHashes(instance, user, [aclPasswordHash(password)], rules);
  }

  /** As `setUser`, with every password the user accepts (their SHA-256 hashes, oldest first). */
  setUserHashes(instance: string, user: string, passwordHashes: readonly string[], rules: readonly string[]): Promise<void> {
    return this.change(instance, { op: "set", user, passwordHashes, rules });
  }

  /** Removes the user; Redis also closes its connections. */
  deleteUser(instance: string, user: string): Promise<void> {
    return this.change(instance, { op: "delete", user });
  }

  /** Removes every user of the instance. */
  deleteInstanceUsers(instance: string): Promise<void> {
    return this.change(instance, { op: "delete-instance", instance });
  }

  /** Saves what the journal holds, then stops saving. */
  async close(): Promise<void> {
    clearTimeout(this.retry);
    this.closed = true;
    await this.saveSoon(true).catch(() => {}); // logged there; the next start saves what is left
  }

  private async change(instance: string, change: AclChange): Promise<void> {
    const server = await this.apply(change);
    if (!(await hasAclFile(this.options.admin))) return; // nothing to keep durable: users live until the server restarts
    await this.record([{ instance, change, server }]);
    void this.saveSoon(++this.waiting >= SAVE_AFTER_CHANGES);
  }

  /** Makes the change on the shared server; resolves with the `run_id` of the process that made it. */
  private async apply(change: AclChange): Promise<string> {
    const { admin } = this.options;
    const transaction = admin.multi();
    switch (change.op) {
      case "set": {
        const hashes = change.passwordHashes ?? (change.passwordHash === undefined ? [] : [change.passwordHash]);
        transaction.aclSetUser(change.user, ["reset", "on", ...hashes.map((hash) => `#${hash}`), ...change.rules]);
        break;
      }
      case "delete":
        transaction.aclDelUser(change.user);
        break;
      case "delete-instance": {
        const prefix = userPrefix(change.instance);
        const users = (await admin.aclUsers()).filter((user) => user.startsWith(prefix));
        if (users.length > 0) transaction.aclDelUser(users);
        break;
      }
    }
    const replies = await transaction.info("server").exec();
    return runIdOf(replies.at(-1));
  }

  private async record(entries: ReadonlyArray<Omit<JournalEntry, "id">>, replacing: readonly string[] = []): Promise<void> {
    const { registry, key, waitForReplicas = 0 } = this.options;
    const writes = registry.multi();
    for (const { instance, change, server } of entries) writes.xAdd(key, "*", { instance, change: JSON.stringify(change), server });
    if (replacing.length > 0) writes.xDel(key, [...replacing]);
    if (waitForReplicas === 0) await writes.exec();
    else await afterReplicas(writes, waitForReplicas, DEFAULT_REPLICA_TIMEOUT_MS);
  }

  private saveSoon(promptly = false): Promise<void> {
    if (promptly) {
      this.promptly = true;
      this.wake?.abort();
    }
    const saved = this.saveInBackground();
    saved.catch((error: unknown) => {
      this.options.log.warn({ err: error }, "saving the shared Redis server's ACL file failed; trying again");
      clearTimeout(this.retry);
      if (!this.closed) this.retry = setTimeout(() => void this.saveSoon(true), RETRY_MS).unref();
    });
    return saved;
  }

  /** One save: waits for its turn, saves the ACL file, removes the entries it covers, replays the others. */
  private async saveCycle(): Promise<void> {
    await this.waitForTurn();
    const { admin, registry, key } = this.options;
    this.waiting = 0;
    const newest = (await registry.xRevRange(key, "+", "-", { COUNT: 1 }))?.[0];
    if (newest === undefined) return;
    const replies = await admin.multi().aclSave().info("server").exec();
    const server = runIdOf(replies.at(-1));
    this.lastSaveEndedAt = Date.now();
    const stale = Number(await registry.eval(REMOVE_SAVED, { keys: [key], arguments: [newest.id, server] }));
    if (stale > 0) {
      await this.replay(server);
      void this.saveSoon(true); // the replayed changes are new entries, for the next save
    }
  }

  /** Paced: the file is rewritten at most every `saveIntervalMs`, unless many changes wait. */
  private async waitForTurn(): Promise<void> {
    const wait = this.lastSaveEndedAt + this.options.saveIntervalMs - Date.now();
    if (wait > 0 && !this.promptly && !this.closed) {
      this.wake = new AbortController();
      await sleep(wait, undefined, { signal: this.wake.signal }).catch(() => {});
      this.wake = undefined;
    }
    this.promptly = false;
  }

  /** Makes again, instance by instance, the changes a save on process `server` did not cover. */
  private async replay(server: string): Promise<void> {
    const stale = new Set((await this.entries()).filter((entry) => entry.server !== server).map((entry) => entry.instance));
    let changes = 0;
    for (const instance of stale) {
      changes += await this.options.store.withLock(instance, REPLAY_LOCK_WAIT_MS, async () => {
        // Read again under the lock: calls made meanwhile added entries this replay must not undo.
        const entries = (await this.entries()).filter((entry) => entry.instance === instance);
        if (entries.every((entry) => entry.server === server)) return 0; // another replica made them again first
        const remade: Array<Omit<JournalEntry, "id">> = [];
        for (const { change } of entries) remade.push({ instance, change, server: await this.apply(change) });
        await this.record(remade, entries.map((entry) => entry.id));
        return remade.length;
      });
    }
    this.options.log.info({ instances: stale.size, changes }, "made again the ACL changes the shared Redis server lost when it restarted");
  }

  private async entries(): Promise<JournalEntry[]> {
    const { registry, key } = this.options;
    return ((await registry.xRange(key, "-", "+")) ?? []).map(({ id, message }) => ({
      id,
      instance: String(message.instance),
      change: JSON.parse(String(message.change)) as AclChange,
      server: String(message.server),
    }));
  }
}
