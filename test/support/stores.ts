/**
 * The store harness: every Store of the workspace (MemoryStore, RedisStore on a real
 * redis-server) behind one factory, so a test runs the same calls on each; request builders, a
 * context, and a provider served on loopback. provider-kit's lifecycle tests and
 * @provider-kit/redis-store's tests share it (public exports only).
 */
import { createClient } from "@redis/client";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { afterAll, afterEach, beforeAll } from "vitest";
import { MemoryStore, type BindAppRequest, type CreateRequest, type RequestContext, type UnbindAppRequest } from "provider-kit";
import { emptyCensus, type Store, type StoreCensus } from "provider-kit/store";
import { RedisStore } from "@provider-kit/redis-store";
import { startRedisServer, type RedisServer } from "./redis-server.js";

export const silent = pino({ level: "silent" });

export type StoreKind = "memory" | "redis";
export const STORE_KINDS: StoreKind[] = ["memory", "redis"];

export interface Stores {
  /** A fresh, empty store of that kind, closed after the test. */
  fresh(kind: StoreKind): Store;
  /**
   * Another handle on the same data, as a restarted or second process would open it
   * (the same object for memory, a new client on the same key prefix for Redis).
   */
  reopen(store: Store): Store;
  /** The redis-server the file shares. */
  redis(): RedisServer;
}

export interface RawRedis {
  /** The redis-server's URL. */
  readonly url: string;
  /** A plain client on it: to read the keys a store wrote, or to stall the server (CLIENT PAUSE). */
  readonly raw: ReturnType<typeof createClient>;
}

/** Registers hooks: one redis-server for the test file (or describe) and a plain client on it, both stopped after. */
export function useRawRedis(): RawRedis {
  let server: RedisServer | undefined;
  let client: ReturnType<typeof createClient> | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    client = createClient({ url: server.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error("redis-server is not started yet (use it inside tests)");
    return value;
  };
  return {
    get url() {
      return started(server).url;
    },
    get raw() {
      return started(client);
    },
  };
}

/** Registers hooks: one redis-server for the test file, each test on its own key prefix. */
export function useStores(): Stores {
  let server: RedisServer | undefined;
  let opened: Store[] = [];
  let prefixes = 0;
  const prefixOf = new Map<Store, string>();

  beforeAll(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    await Promise.all(opened.map((store) => store.close()));
    opened = [];
  });
  afterAll(async () => {
    await server?.stop();
  });

  const redis = () => {
    if (!server) throw new Error("redis-server is not started yet (use stores inside tests)");
    return server;
  };
  const redisStore = (keyPrefix: string) => {
    const store = new RedisStore({ url: redis().url, keyPrefix });
    prefixOf.set(store, keyPrefix);
    opened.push(store);
    return store;
  };
  return {
    redis,
    fresh: (kind) => (kind === "memory" ? new MemoryStore() : redisStore(`test${++prefixes}:`)),
    reopen: (store) => {
      const keyPrefix = prefixOf.get(store);
      return keyPrefix === undefined ? store : redisStore(keyPrefix);
    },
  };
}

export function context(): RequestContext {
  const { signal } = new AbortController();
  // No handler timeout: the tests that need one abort their own signal.
  return {
    requestId: "test-request",
    signal,
    log: silent,
    placement: { clusterAddresses: [] },
    throwIfAborted: () => signal.throwIfAborted(),
    deadline: Number.POSITIVE_INFINITY,
    claimAnswer: () => !signal.aborted,
    waitingForLock: () => {},
  };
}

export const createRequest = (instance: string, extra: Partial<CreateRequest> = {}): CreateRequest => ({
  instance,
  tags: [],
  parameters: {},
  ...extra,
});

export const bindAppRequest = (instance: string, appName: string, extra: Partial<BindAppRequest> = {}): BindAppRequest => ({
  instance,
  appName,
  appHost: `${appName}.example.com`,
  appHosts: [],
  appInternalHosts: [],
  parameters: {},
  placement: { clusterAddresses: [] },
  ...extra,
});

export const unbindAppRequest = (instance: string, appName: string, extra: Partial<UnbindAppRequest> = {}): UnbindAppRequest => ({
  instance,
  appName,
  appHost: `${appName}.example.com`,
  appHosts: [],
  placement: { clusterAddresses: [] },
  ...extra,
});


/** Resolves with the error a promise rejects with; fails the test if it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<Error & { status?: number }> {
  try {
    await promise;
  } catch (error) {
    return error as Error & { status?: number };
  }
  throw new Error("expected the call to fail, but it succeeded");
}

export interface Served {
  url: string;
  /** One call to the provider, form-encoded like the platform's; resolves with status and body text. */
  call(method: string, path: string, form?: Record<string, string | string[]>): Promise<{ status: number; body: string }>;
  close(): Promise<void>;
}

/** Minimal view of a provider server: anything with `listen` (an Express app) and `close()`. */
interface Listening {
  listen(port: number, host: string, ready: () => void): import("node:http").Server;
  close(): Promise<void>;
}

/** Serves a provider on a free loopback port. */
export async function serve(provider: Listening): Promise<Served> {
  const server = await new Promise<import("node:http").Server>((resolve) => {
    const listening = provider.listen(0, "127.0.0.1", () => resolve(listening));
  });
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("the provider is not listening");
  return httpClient(`http://127.0.0.1:${address.port}`, async () => {
    await provider.close();
    await new Promise((resolve) => server.close(resolve));
  });
}

/** Calls a provider at `url` the way the platform does (form bodies, also on DELETE). */
export function httpClient(url: string, close: () => Promise<void> = async () => {}): Served {
  return {
    url,
    close,
    async call(method, path, form) {
      const body = new URLSearchParams();
      for (const [key, value] of Object.entries(form ?? {})) {
        for (const item of Array.isArray(value) ? value : [value]) body.append(key, item);
      }
      const response = await fetch(`${url}${path}`, {
        method,
        body: form ? body : undefined,
        headers: { accept: "application/json" },
      });
      return { status: response.status, body: await response.text() };
    },
  };
}

/** A logger whose lines the test reads. */
export function capturedLog(): { log: Logger; lines: Array<{ level: number; msg: string }> } {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim() !== "") lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: "info" }, sink), lines };
}


/** A census with these counts and zero elsewhere. */
export function counted(instances: Partial<StoreCensus["instances"]>, bindings: Partial<StoreCensus["bindings"]>): StoreCensus {
  const census = emptyCensus();
  return { instances: { ...census.instances, ...instances }, bindings: { ...census.bindings, ...bindings } };
}
