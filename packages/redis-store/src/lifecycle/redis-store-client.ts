/**
 * How `RedisStore` talks to Redis: its clients (one, or with `waitForReplicas` a second one
 * for writes), the bounded wait for a connection, a time limit on every operation, scripts run
 * by SHA1, and writes followed by `WAIT`. Whatever Redis does wrong ends as a 503 that says to
 * try again.
 */
import type { Logger } from "pino";
import { ProviderError } from "provider-kit";
import { isTransientReply, nodeRedis, sentinelClient, type RedisStoreClient, type SentinelAddress } from "../redis/connection.js";
import { afterReplicas } from "../redis/replicas.js";
import { SharedRuns } from "provider-kit/store";
import { evalScript, isNoScript, type Script } from "./redis-scripts.js";

/** 503: the store's Redis cannot be reached, or did not answer in time; the call may be retried. */
export class StoreUnavailableError extends ProviderError {
  constructor(options?: ErrorOptions) {
    super("The provider cannot reach its state store (Redis) right now; try again in a moment.", 503, options);
  }
}

/** The 503 of an operation that ran out of time (Redis did not answer, or no connection came up); its caller may tell why it had that little. */
export class StoreTimeoutError extends StoreUnavailableError {}

/** A failure of Redis rather than of the store's own code, as the 503 it answers. */
function asUnavailable(error: unknown): unknown {
  if (error instanceof ProviderError) return error;
  // A reply that reveals a bug stays what it is; a pipeline (a write and its WAIT) fails as a whole.
  if (error instanceof nodeRedis().ErrorReply && !isTransientReply(error)) return error;
  return new StoreUnavailableError({ cause: error });
}

/**
 * Both fail calls at once while Redis is unreachable, rather than hold them until the platform
 * gives up. Their commands carry no timeout of node-redis's own (`timeout: 0`): the store bounds
 * every operation itself (`commandTimeoutMs`, see `run`), and node-redis's would build an
 * `AbortSignal.timeout` for every command.
 */
const NO_COMMAND_TIMEOUT = { timeout: 0 };

export interface StoreClientOptions {
  /** Where Redis is: a URL or sentinels (the client is then the store's own), or a client of the caller's. */
  connection: { url: string } | { sentinel: SentinelAddress } | { client: RedisStoreClient };
  connectTimeoutMs: number;
  commandTimeoutMs: number;
  waitForReplicas: number;
  replicaTimeoutMs: number;
  log: Logger | undefined;
}

const NO_RUN_OPTIONS = {};

export class StoreClient {
  private readonly client: RedisStoreClient;
  /**
   * The connection instance and binding writes go through: the same client, or with
   * `waitForReplicas` one of their own, since a `WAIT` holds back every later command of its
   * connection until the replicas answer (up to `replicaTimeoutMs` when none does).
   */
  private readonly writer: RedisStoreClient;
  /** The clients the store opened, and so closes. */
  private readonly owned: RedisStoreClient[] = [];
  /** Per client, the wait for it to be ready that calls arriving meanwhile share. */
  private readonly readyWaits = new SharedRuns<RedisStoreClient, boolean>();

  constructor(private readonly options: StoreClientOptions) {
    const { connection } = options;
    if ("client" in connection) this.client = connection.client;
    else this.client = this.own("url" in connection ? ownClient(connection.url) : sentinelClient(connection.sentinel, NO_COMMAND_TIMEOUT));
    this.writer = options.waitForReplicas > 0 ? this.own(this.client.duplicate()) : this.client;
  }

  private own(client: RedisStoreClient): RedisStoreClient {
    client.on("error", (error: unknown) => this.options.log?.warn({ err: error }, "Redis store connection error"));
    this.owned.push(client);
    return client;
  }

  /**
   * The client once it is ready. While Redis is unreachable the client keeps reconnecting and a
   * call would hang until the platform gives up; it waits `connectTimeoutMs`, then fails clearly.
   */
  private async ready(client: RedisStoreClient): Promise<RedisStoreClient> {
    if (!client.isOpen) {
      // Its promise settles only once connected; `ready` below is what callers wait for.
      client.connect().catch((error: unknown) => this.options.log?.warn({ err: error }, "Redis store could not connect"));
    }
    if (client.isReady) return client;
    // Calls that arrive while the client connects share one wait (one listener, whatever the load).
    const becameReady = await this.readyWaits.run(
      client,
      () =>
        new Promise<boolean>((resolve) => {
          const onReady = () => {
            clearTimeout(timer);
            resolve(true);
          };
          const timer = setTimeout(() => {
            client.off("ready", onReady);
            resolve(false);
          }, this.options.connectTimeoutMs);
          client.once("ready", onReady);
        }),
    );
    if (!becameReady) throw new StoreUnavailableError();
    return client;
  }

  /**
   * Runs one store operation on a ready client (default: the main one), for at most `timeoutMs`.
   * Whatever Redis does wrong (unreachable, a connection lost mid-command, a failover that
   * outlasts it) ends as a 503.
   */
  run<T>(
    operation: (redis: RedisStoreClient) => Promise<T>,
    { timeoutMs = this.options.commandTimeoutMs, client = this.client }: { timeoutMs?: number; client?: RedisStoreClient } = NO_RUN_OPTIONS,
  ): Promise<T> {
    // One promise and one timer per operation: it runs on every call of every request.
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new StoreTimeoutError({ cause: new Error(`Redis did not answer within ${timeoutMs} ms`) })), timeoutMs);
      const answer = client.isReady ? operation(client) : this.ready(client).then(operation);
      answer.then(
        (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(asUnavailable(error));
        },
      );
    });
  }

  /** A script that changes no instance or binding (locks, leases, the census), answering its reply; bounded by `timeoutMs` when given. */
  script(script: Script, keys: string[], args: string[], timeoutMs?: number): Promise<unknown> {
    return this.run((redis) => evalScript(redis, script, keys, args), timeoutMs === undefined ? NO_RUN_OPTIONS : { timeoutMs });
  }

  /**
   * Runs a script that changes instances or bindings and, with `waitForReplicas`, waits for
   * the replicas in the same pipeline: `WAIT` counts the writes of its own connection, and a
   * Sentinel client that retries after a failover retries both together.
   */
  durableScript(script: Script, keys: string[], args: string[]): Promise<number> {
    const { waitForReplicas, replicaTimeoutMs } = this.options;
    if (waitForReplicas === 0) return this.run(async (redis) => Number(await evalScript(redis, script, keys, args)));
    const withWait = async (redis: RedisStoreClient, bySha: boolean) => {
      const evaluate = redis.multi();
      if (bySha) evaluate.evalSha(script.sha, { keys, arguments: args });
      else evaluate.eval(script.source, { keys, arguments: args });
      const [result] = await afterReplicas(evaluate, waitForReplicas, replicaTimeoutMs);
      return Number(result);
    };
    return this.run((redis) => withWait(redis, true).catch((error: unknown) => (isNoScript(error) ? withWait(redis, false) : Promise.reject(error))), {
      client: this.writer,
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

function ownClient(url: string): RedisStoreClient {
  return nodeRedis().createClient({ url, disableOfflineQueue: true, commandOptions: NO_COMMAND_TIMEOUT });
}
