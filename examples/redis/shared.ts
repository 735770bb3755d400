/**
 * Plan `shared`: instances live on one Redis server the provider administers.
 * An instance is a key prefix `<instance>:`; each binding is an ACL user allowed only that
 * prefix (keys and channels); a per-instance health user lets status connect as the instance.
 */
import {
  bindingUserName,
  connectionEnv,
  deleteInstanceUsers,
  deleteUser,
  generatePassword,
  healthUserName,
  setUser,
} from "./acl.js";
import { answersPing, type RedisClient } from "../../src/redis/connection.js";
import { dataString, type RedisPlan } from "./plan.js";

export interface SharedPlanOptions {
  /** Connection to the shared server as its administrator. */
  admin: RedisClient;
  /** Where apps (and the status check) reach the shared server. */
  host: string;
  port: number;
}

/**
 * Everything an app needs, minus what would let it leave its prefix or disturb other tenants.
 * Key patterns only filter key arguments, so commands that list or count the whole keyspace
 * (SCAN, KEYS, RANDOMKEY, DBSIZE), list channels (PUBSUB), watch every key name (CLIENT TRACKING
 * in BCAST mode accepts any prefix) or switch databases (SELECT, MOVE, COPY ... DB) are denied.
 * SORT is in @dangerous only for BY/GET, which Redis refuses anyway to a user without `~*`.
 * Script commands run under the caller's ACL, but SCRIPT FLUSH/KILL and FUNCTION are server-wide.
 */
const APP_COMMANDS = [
  "+@all",
  "-@admin",
  "-@dangerous",
  "+sort",
  "+sort_ro",
  "-scan",
  "-randomkey",
  "-dbsize",
  "-pubsub",
  "-client|tracking",
  "-select",
  "-move",
  "-copy",
  "-function",
  "-script|flush",
  "-script|kill",
];

/** The health user may only PING: its password sits in the registry. */
const HEALTH_COMMANDS = ["+ping"];

/** `info` is called for every instance of a listing: it scans at most this many SCAN pages of 1000. */
const INFO_SCAN_PAGES = 10;
/** Memory is summed key by key, so only for instances with at most this many keys. */
const INFO_MEMORY_KEY_LIMIT = 1_000;

function keyPrefix(instance: string): string {
  return `${instance}:`;
}

export function sharedPlan(options: SharedPlanOptions): RedisPlan {
  const { admin, host, port } = options;
  const appRules = (instance: string) => [`~${keyPrefix(instance)}*`, `&${keyPrefix(instance)}*`, ...APP_COMMANDS];

  return {
    plan: {
      name: "shared",
      description:
        "A key prefix on a shared Redis server: each app gets its own user, limited to the instance's keys and channels.",
    },

    async create(request) {
      const healthPassword = generatePassword();
      await setUser(admin, healthUserName(request.instance), healthPassword, HEALTH_COMMANDS);
      return { data: { plan: "shared", healthPassword } };
    },

    async bind(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      const password = generatePassword();
      await setUser(admin, user, password, appRules(record.name));
      return { ...connectionEnv({ host, port, user, password }), REDIS_KEY_PREFIX: keyPrefix(record.name) };
    },

    async unbind(record, target) {
      await deleteUser(admin, bindingUserName(record.name, target.kind, target.key));
    },

    async status(record) {
      const password = dataString(record.data, "healthPassword");
      if (await answersPing({ host, port, username: healthUserName(record.name), password })) return "running";
      return { down: `The shared Redis server at ${host}:${port} does not accept this instance's connections.` };
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

    async destroy(record) {
      for await (const keys of admin.scanIterator({ MATCH: `${keyPrefix(record.name)}*`, COUNT: 1000 })) {
        if (keys.length > 0) await admin.unlink(keys);
      }
      await deleteInstanceUsers(admin, record.name);
    },
  };
}

/** Counts (and, when few, weighs) the keys under `prefix`, within INFO_SCAN_PAGES. */
async function measure(admin: RedisClient, prefix: string) {
  const keys: string[] = [];
  let pages = 0;
  let complete = true;
  for await (const page of admin.scanIterator({ MATCH: `${prefix}*`, COUNT: 1000 })) {
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
