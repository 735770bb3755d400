/**
 * Plan `dedicated`: each instance is its own `redis-server` process on a loopback port, with its
 * own data directory, administrator password and memory limit. The process is started in the
 * background (`create` answers at once, `provision` waits for PING) and outlives the provider:
 * apps keep working while the provider restarts, and the next run adopts the running processes.
 */
import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "pino";
import { NAME_PATTERN, OSB_NAME_PATTERN, type InstanceData, type InstanceRecord, type Store } from "provider-kit";
import {
  addPassword,
  bindingUserName,
  connectionEnv,
  deleteUser,
  generatePassword,
  keepNewestPassword,
  setUser,
  setUserHashes,
} from "./acl.js";
import { redisClient, type Address, type RedisClient } from "@provider-kit/redis-store/connection";
import { dataNumber, dataString, type RedisPlan } from "./plan.js";
import {
  ensureRedisServer,
  freePort,
  isPortFree,
  removeRedisServer,
  runningPid,
  type RedisServerSpec,
} from "@provider-kit/platform/redis-server";

export interface DedicatedPlanOptions {
  /** Each instance lives in `<dir>/<instance name>`. */
  dir: string;
  /** The `redis-server` executable. */
  binary: string;
  /** `maxmemory` of every dedicated instance, e.g. `64mb`. */
  maxmemory: string;
}

const HOST = "127.0.0.1";

/**
 * The instance is the app's own server, so the data commands marked dangerous (FLUSHDB, KEYS,
 * INFO...) are allowed; what stays denied is administration: other users, config, shutdown.
 */
const APP_RULES = ["~*", "&*", "+@all", "-@admin", "-@dangerous", "+flushdb", "+flushall", "+keys", "+info", "+sort", "+sort_ro"];

export interface DedicatedPlan extends RedisPlan {
  /**
   * At provider start-up: restart the processes of ready instances that are not running, and
   * remove directories the registry no longer knows (left by a destroy interrupted mid-way).
   */
  adopt(store: Pick<Store, "getInstance">, log: Logger): Promise<void>;
  /** Closes the connections kept to the instances (the processes keep running). */
  close(): Promise<void>;
}

export function dedicatedPlan(options: DedicatedPlanOptions): DedicatedPlan {
  const instanceDir = (name: string) => {
    // The framework validates names (native ones, and `osb:<id>` for the broker's); checked again because this one becomes a path.
    if (!NAME_PATTERN.test(name) && !OSB_NAME_PATTERN.test(name)) throw new Error(`Refusing instance name "${name}" as a directory.`);
    return join(options.dir, name);
  };
  const serverSpec = (name: string, data: InstanceData): RedisServerSpec => ({
    dir: instanceDir(name),
    port: dataNumber(data, "port"),
    password: dataString(data, "password"),
    maxmemory: dataString(data, "maxmemory"),
    detached: true,
    binary: options.binary,
  });

  const adminAddress = (data: InstanceData): Address => ({
    host: HOST,
    port: dataNumber(data, "port"),
    password: dataString(data, "password"),
  });

  // One administrator connection per instance, kept open: status, binds and info reuse it
  // instead of opening (and leaving in TIME_WAIT) a connection per call. A connection that
  // broke (the process died or restarted) is replaced on the next call.
  const connections = new Map<string, { port: number; client: Promise<RedisClient> }>();
  const forget = (name: string) => {
    const entry = connections.get(name);
    connections.delete(name);
    entry?.client.then((client) => client.isOpen && client.destroy(), () => {});
  };
  const adminClient = async (record: InstanceRecord): Promise<RedisClient> => {
    const address = adminAddress(record.data);
    const entry = connections.get(record.name);
    if (entry?.port === address.port) {
      const client = await entry.client.catch(() => undefined);
      if (client?.isReady) return client;
    }
    // Unless a concurrent call has replaced it meanwhile, replace the missing or broken one.
    if (connections.get(record.name) === entry) {
      forget(record.name);
      const client = redisClient(address);
      connections.set(record.name, { port: address.port, client: client.connect().then(() => client) });
    }
    return connections.get(record.name)!.client;
  };
  // Starts and stops of one instance's process run one after another, never side by side: a
  // removal waits for a start under way (one whose step was abandoned, or a restart by status),
  // so the process that start spawns is recorded before the removal looks for it.
  const turns = new Map<string, Promise<unknown>>();
  const inTurn = <T>(name: string, work: () => Promise<T>): Promise<T> => {
    const run = (turns.get(name) ?? Promise.resolve()).then(work, work);
    const settled = run.catch(() => {});
    turns.set(name, settled);
    void settled.then(() => turns.get(name) === settled && turns.delete(name));
    return run;
  };
  const asAdmin = async <T>(record: InstanceRecord, work: (client: RedisClient) => Promise<T>) => work(await adminClient(record));
  const answersPing = (record: InstanceRecord) =>
    asAdmin(record, async (client) => (await client.ping()) === "PONG").catch(() => false);

  return {
    plan: {
      name: "dedicated",
      description: `A Redis server of its own (maxmemory ${options.maxmemory}); each app gets its own user.`,
    },

    async create() {
      const data = { plan: "dedicated", host: HOST, port: await freePort(), password: generatePassword(), maxmemory: options.maxmemory };
      return { pending: true, data };
    },

    provision(record, context) {
      return inTurn(record.name, async () => {
        context.signal.throwIfAborted(); // abandoned while waiting for its turn: a removal may have come first
        let data = record.data;
        const dir = instanceDir(record.name);
        // The port was free at create; if someone took it since, move to another before starting.
        if ((await runningPid(dir)) === undefined && !(await isPortFree(dataNumber(data, "port")))) {
          data = { ...data, port: await freePort() };
        }
        await ensureRedisServer(serverSpec(record.name, data), { signal: context.signal });
        return { data };
      });
    },

    async bind(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      const password = generatePassword();
      await asAdmin(record, (client) => setUser(client, user, password, APP_RULES));
      return connectionEnv({ host: HOST, port: dataNumber(record.data, "port"), user, password });
    },

    async unbind(record, target) {
      await asAdmin(record, (client) => deleteUser(client, bindingUserName(record.name, target.kind, target.key)));
    },

    async rotate(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      const password = generatePassword();
      await asAdmin(record, (client) => addPassword(client, user, password, (hashes) => setUserHashes(client, user, hashes, APP_RULES)));
      return connectionEnv({ host: HOST, port: dataNumber(record.data, "port"), user, password });
    },

    retire(record, target) {
      const user = bindingUserName(record.name, target.kind, target.key);
      return asAdmin(record, (client) => keepNewestPassword(client, user, (hashes) => setUserHashes(client, user, hashes, APP_RULES)));
    },

    async status(record, log) {
      const spec = serverSpec(record.name, record.data);
      if (await answersPing(record)) return "running";
      if ((await runningPid(spec.dir)) !== undefined) {
        return { down: `The Redis process of this instance does not answer on port ${spec.port} (it may still be starting).` };
      }
      inTurn(record.name, () => ensureRedisServer(spec)).catch((error: unknown) => log.error({ err: error, instance: record.name }, "restart failed"));
      return { down: "The Redis process of this instance was not running; it is being restarted. Check again in a few seconds." };
    },

    async info(record) {
      const maxmemory = dataString(record.data, "maxmemory");
      // Still starting, or down: the listing that calls info still gets what is known.
      const usage = await asAdmin(record, async (client) => [
        { label: "Keys", value: String(await client.dbSize()) },
        { label: "Memory used", value: `${parseInfo(await client.info("memory")).used_memory_human ?? "?"} of ${maxmemory}` },
      ]).catch(() => [{ label: "Memory used", value: `unknown (the server does not answer) of ${maxmemory}` }]);
      return [
        { label: "Plan", value: "dedicated" },
        { label: "Address", value: `${HOST}:${dataNumber(record.data, "port")}` },
        ...usage,
      ];
    },

    flush(record) {
      // DBSIZE and FLUSHALL in one transaction: the count is what FLUSHALL removed.
      return asAdmin(record, async (client) => {
        const [keys] = await client.multi().dbSize().flushAll().exec();
        return Number(keys);
      });
    },

    memory(record) {
      return asAdmin(record, async (client) => {
        const [keys, info] = await client.multi().dbSize().info("memory").exec();
        return { plan: "dedicated", keys: Number(keys), complete: true, usedBytes: Number(parseInfo(typeof info === "string" ? info : "").used_memory) };
      });
    },

    async destroy(record) {
      forget(record.name);
      await inTurn(record.name, () => removeRedisServer(instanceDir(record.name)));
    },

    async close() {
      for (const name of [...connections.keys()]) forget(name);
    },

    async adopt(store, log) {
      const names = await readdir(options.dir).catch(() => []);
      const adoptOne = async (name: string) => {
        const record = await store.getInstance(name);
        if (record === undefined) {
          log.info({ instance: name }, "removing a dedicated instance the registry no longer knows");
          await inTurn(name, () => removeRedisServer(instanceDir(name)));
        } else if (record.state === "ready" && record.data.plan === "dedicated") {
          await inTurn(name, () => ensureRedisServer(serverSpec(name, record.data)));
        }
      };
      await Promise.all(
        names.map((name) =>
          adoptOne(name).catch((error: unknown) => log.error({ err: error, instance: name }, "adopting a dedicated instance failed")),
        ),
      );
    },
  };
}

/** `INFO` text into fields: `used_memory_human:1.2M` → `{ used_memory_human: "1.2M" }`. */
function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon > 0 && !line.startsWith("#")) fields[line.slice(0, colon)] = line.slice(colon + 1);
  }
  return fields;
}
