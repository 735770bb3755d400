/**
 * Plan `shared`: instances live on one Redis server the provider administers.
 * An instance is a key prefix (`<instance>:`, or `osb@<id>:` for OSB's: key-space.ts); each
 * binding is an ACL user allowed only that prefix (keys and channels); a per-instance health user,
 * which status logs in as, tells whether the server still knows the instance's users.
 */
import { createHash } from "node:crypto";
import {
  addPassword,
  bindingUserName,
  connectionEnv,
  generatePassword,
  healthUserName,
  keepNewestPassword,
  replaceRules,
  setMarker,
  type CredentialChecker,
} from "./acl.js";
import type { AclJournal } from "./acl-journal.js";
import type { Logger } from "pino";
import type { StatusResult, Store } from "provider-kit";
import { type RedisClient } from "@provider-kit/redis-store/connection";
import { SharedRuns } from "provider-kit/store";
import { dataString, type RedisPlan } from "./plan.js";
import { instanceOfUser, keyPrefix, under } from "./key-space.js";

export interface SharedPlanOptions {
  /** Connection to the shared server as its administrator. */
  admin: RedisClient;
  /** Makes the users' changes and keeps them durable. */
  users: AclJournal;
  /** Checks the health users' passwords on the same server. */
  checker: CredentialChecker;
  /** Where apps (and the status check) reach the shared server. */
  host: string;
  port: number;
}

/**
 * What an app may run: an allow-list of the data categories, then the few connection commands a
 * client needs. Anything else is denied, including commands a future Redis adds outside these
 * categories. ACL key and channel patterns only filter key and channel arguments, so what an app
 * may run must either name its keys (and so stay under its prefix) or concern its own connection;
 * the test "allows no keyless command but the reviewed ones" holds every Redis release to that.
 * Denied, because no granted category holds them or denied again after one did:
 * - scripting and functions (EVAL*, SCRIPT*, FCALL*, FUNCTION*): a busy script blocks every
 *   tenant, SCRIPT DEBUG in sync mode crashes Redis 7.0, and the script cache is server-wide;
 * - the server-wide view: SCAN, KEYS, RANDOMKEY, DBSIZE (the whole keyspace), PUBSUB (every
 *   channel), CLIENT TRACKING (BCAST accepts any prefix), LOLWUT (the server's version);
 * - other databases: SELECT, MOVE, COPY (its DB option), SWAPDB;
 * - @admin and @dangerous (CONFIG, INFO, DEBUG, MONITOR, SLOWLOG, LATENCY, CLIENT LIST/KILL...),
 *   except SORT, which Redis refuses anyway to a user without `~*` when it uses BY or GET.
 * MEMORY STATS, DOCTOR and MALLOC-STATS are in no allowed category: only MEMORY USAGE (a key) is.
 */
const APP_COMMANDS = [
  ...["read", "write", "keyspace", "string", "hash", "list", "set", "sortedset", "bitmap", "hyperloglog", "geo", "stream"].map(
    (category) => `+@${category}`,
  ),
  "+@pubsub",
  "+@transaction",
  ...["ping", "echo", "hello", "auth", "reset", "quit", "time", "command"].map((command) => `+${command}`),
  ...["id", "info", "setname", "getname", "reply"].map((subcommand) => `+client|${subcommand}`),
  "-@admin",
  "-@dangerous",
  "-@scripting",
  "+sort",
  "+sort_ro",
  ...["scan", "randomkey", "dbsize", "pubsub", "lolwut", "select", "move", "copy"].map((command) => `-${command}`),
];

/**
 * The health user may only PING: its password sits in the registry. Status checks that the server
 * still accepts it, with that password (a server restarted without its ACL file does not).
 */
const HEALTH_COMMANDS = ["+ping"];

const appRules = (instance: string) => [`~${under(keyPrefix(instance))}`, `&${under(keyPrefix(instance))}`, ...APP_COMMANDS];

/**
 * A user (no one can log in as it) whose name says which rules the users in the ACL file have:
 * it is saved and lost with them. `_` starts no user prefix, so no instance owns it.
 */
const RULES_MARKER_PREFIX = "_provider-kit.shared-rules.";
const RULES_MARKER = `${RULES_MARKER_PREFIX}${createHash("sha256")
  .update(JSON.stringify([appRules("example"), HEALTH_COMMANDS])) // any instance: the rules' shape
  .digest("hex")
  .slice(0, 16)}`;

/**
 * `info` is called for every instance of a listing (and `memory` by any user holding the action):
 * each scans at most this many SCAN pages of 1000.
 */
const INFO_SCAN_PAGES = 10;
/** Memory is summed key by key, so only for instances with at most this many keys. */
const INFO_MEMORY_KEY_LIMIT = 1_000;

export interface SharedPlan extends RedisPlan {
  /**
   * At provider start-up: when the server's users were given other rules than today's (by an
   * earlier version), the users of every shared instance get today's rules (passwords kept), so
   * apps bound by that version lose at once what this one no longer allows. Otherwise (every
   * start but the first of a version with new rules) one lookup, whatever the number of users.
   */
  adopt(store: Pick<Store, "getInstance">, log: Logger): Promise<void>;
}

export function sharedPlan(options: SharedPlanOptions): SharedPlan {
  const { admin, users, checker, host, port } = options;

  /**
   * The health check: can a connection log in as the instance's health user, with its password?
   * A server that restarted before saving its users gets them back from the journal: the check
   * waits for that and looks again, and answers "pending" while they cannot be made again yet.
   */
  const healthCheck = async (instance: string, password: string, afterRestore = false): Promise<StatusResult> => {
    const accepted = await checker.accepts(healthUserName(instance), password).catch(() => undefined);
    if (accepted === undefined) return { down: `The shared Redis server at ${host}:${port} does not answer the provider.` };
    if (accepted) return "running";
    if (!afterRestore) {
      const restored = await users.restoreLost(instance).then(
        (lost) => (lost ? "restored" : "nothing lost"),
        () => "not yet",
      );
      if (restored === "restored") return healthCheck(instance, password, true);
      if (restored === "not yet") return "pending";
    }
    return { down: `The shared Redis server at ${host}:${port} does not accept this instance's connections.` };
  };
  const appEnv = (instance: string, user: string, password: string) => ({
    ...connectionEnv({ host, port, user, password }),
    REDIS_KEY_PREFIX: keyPrefix(instance),
  });
  /** A binding user's passwords are changed through the journal, as binds change them. */
  const setPasswordsOf = (instance: string, user: string) => (hashes: readonly string[]) =>
    users.setUserHashes(instance, user, hashes, appRules(instance));
  /** Status calls of one instance that arrive while its check runs share that check. */
  const runningChecks = new SharedRuns<string, StatusResult>();

  return {
    plan: {
      name: "shared",
      description:
        "A key prefix on a shared Redis server: each app gets its own user, limited to the instance's keys and channels.",
    },

    async create(request) {
      const healthPassword = generatePassword();
      await users.setUser(request.instance, healthUserName(request.instance), healthPassword, HEALTH_COMMANDS);
      return { data: { plan: "shared", healthPassword } };
    },

    async bind(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      const password = generatePassword();
      await users.setUser(record.name, user, password, appRules(record.name));
      return appEnv(record.name, user, password);
    },

    async unbind(record, target) {
      await users.deleteUser(record.name, bindingUserName(record.name, target.kind, target.key));
    },

    async rotate(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      const password = generatePassword();
      await addPassword(admin, user, password, setPasswordsOf(record.name, user));
      return appEnv(record.name, user, password);
    },

    retire(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      return keepNewestPassword(admin, user, setPasswordsOf(record.name, user));
    },

    // On a connection the provider keeps open, never a new one per call: a tenant that fills the
    // server's connection slots cannot make every other instance look down.
    status(record) {
      const password = dataString(record.data, "healthPassword");
      return runningChecks.run(`${record.name}\n${password}`, () => healthCheck(record.name, password));
    },

    async info(record) {
      const { count, complete, memoryBytes } = await measure(admin, keyPrefix(record.name));
      return [
        { label: "Plan", value: "shared" },
        { label: "Address", value: `${host}:${port}` },
        { label: "Key prefix", value: keyPrefix(record.name) },
        { label: "Keys", value: complete ? String(count) : `at least ${count}` },
        {
          label: "Memory used",
          value: memoryBytes === undefined ? `not measured (more than ${INFO_MEMORY_KEY_LIMIT} keys)` : formatBytes(memoryBytes),
        },
      ];
    },

    async adopt(store, log) {
      if ((await admin.aclGetUser(RULES_MARKER)) !== null) return;
      const allUsers = await admin.aclUsers();
      const planOf = new Map<string, Promise<unknown>>(); // one registry read per instance
      const outdated: Array<[string, string[]]> = [];
      for (const user of allUsers) {
        const instance = instanceOfUser(user);
        if (instance === undefined) continue;
        if (!planOf.has(instance)) planOf.set(instance, store.getInstance(instance).then((record) => record?.data.plan));
        if ((await planOf.get(instance)) !== "shared") continue;
        outdated.push([user, user === healthUserName(instance) ? HEALTH_COMMANDS : appRules(instance)]);
      }
      await replaceRules(admin, outdated);
      await setMarker(admin, RULES_MARKER, allUsers.filter((user) => user.startsWith(RULES_MARKER_PREFIX)));
      if (outdated.length > 0) log.info({ users: outdated.length }, "users of shared instances given the current rules");
    },

    async destroy(record) {
      await unlinkUnder(admin, keyPrefix(record.name));
      await users.deleteInstanceUsers(record.name);
    },

    flush: (record) => unlinkUnder(admin, keyPrefix(record.name)),

    async memory(record) {
      const { count, complete, memoryBytes } = await measure(admin, keyPrefix(record.name));
      return { plan: "shared", keys: count, complete, usedBytes: memoryBytes ?? null };
    },
  };
}

/** Removes the keys under `prefix`, a SCAN page at a time, so the server never blocks on all of them; resolves with how many. */
async function unlinkUnder(admin: RedisClient, prefix: string): Promise<number> {
  let removed = 0;
  for await (const keys of admin.scanIterator({ MATCH: under(prefix), COUNT: 1000 })) {
    if (keys.length > 0) removed += await admin.unlink(keys);
  }
  return removed;
}

/** Counts (and, when few, weighs) the keys under `prefix`, within INFO_SCAN_PAGES. */
async function measure(admin: RedisClient, prefix: string) {
  const keys: string[] = [];
  let pages = 0;
  let complete = true;
  for await (const page of admin.scanIterator({ MATCH: under(prefix), COUNT: 1000 })) {
    keys.push(...page);
    if (++pages === INFO_SCAN_PAGES) {
      complete = false;
      break;
    }
  }
  let memoryBytes: number | undefined;
  if (complete && keys.length <= INFO_MEMORY_KEY_LIMIT) {
    const usages = await Promise.all(keys.map((key) => admin.memoryUsage(key)));
    memoryBytes = usages.reduce<number>((total, usage) => total + (usage ?? 0), 0);
  }
  return { count: keys.length, complete, memoryBytes };
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}
