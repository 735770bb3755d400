/**
 * A provider built with createProvider for tests: on a real loopback port, its log captured as
 * parsed JSON lines, and a small stateful fake resource so the handlers behave like a real one.
 * provider-kit's HTTP tests and the platform's tests share it.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { Writable } from "node:stream";
import { pino } from "pino";
import request from "supertest";
import { createProvider, NotFoundError, AlreadyExistsError, type Provider, type ProviderHandlers, type ProviderOptions } from "provider-kit";

export const USER = "redis";
export const SERVICE_ID = "svc-redis-0001";
export const PASSWORD = "s3cret:with:colons";
export const AUTH = { usernames: [USER, SERVICE_ID], password: PASSWORD };

export function basic(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
}
export const GOOD_AUTH = basic(USER, PASSWORD);

export type LogLine = Record<string, unknown> & { msg: string; level: number };

/** Every call a handler received, in order, with the typed request it got. */
export interface Received {
  handler: string;
  request: unknown;
  context: { requestId: string; user?: string; eventId?: string };
}

/**
 * A fake resource keeping instances and bindings in memory, throwing the framework's errors the
 * way a real provider would with `registry: false`.
 */
export function fakeResource(overrides: Partial<ProviderHandlers> = {}) {
  const instances = new Map<string, { plan?: string }>();
  const received: Received[] = [];
  const record = (handler: string, request: unknown, context: Received["context"]) =>
    received.push({
      handler,
      request,
      context: { requestId: context.requestId, user: context.user, eventId: context.eventId },
    });
  const existing = (instance: string) => {
    if (!instances.has(instance)) throw new NotFoundError(`Instance "${instance}" not found.`);
  };
  const handlers: ProviderHandlers = {
    plans: async (context) => {
      record("plans", undefined, context);
      return [
        { name: "small", description: "1 GiB" },
        { name: "large", description: "8 GiB" },
      ];
    },
    create: async (req, context) => {
      record("create", req, context);
      if (instances.has(req.instance)) throw new AlreadyExistsError();
      instances.set(req.instance, { plan: req.plan });
    },
    update: async (req, context) => {
      record("update", req, context);
      existing(req.instance);
      instances.set(req.instance, { plan: req.plan });
    },
    destroy: async (req, context) => {
      record("destroy", req, context);
      existing(req.instance);
      instances.delete(req.instance);
    },
    bindApp: async (req, context) => {
      record("bindApp", req, context);
      existing(req.instance);
      return { REDIS_HOST: "10.0.0.1", REDIS_PORT: 6379, REDIS_TLS: true, REDIS_PASSWORD: "bind-secret-value" };
    },
    unbindApp: async (req, context) => {
      record("unbindApp", req, context);
      existing(req.instance);
    },
    bindUnit: async (req, context) => {
      record("bindUnit", req, context);
      existing(req.instance);
      return undefined;
    },
    unbindUnit: async (req, context) => {
      record("unbindUnit", req, context);
      existing(req.instance);
    },
    bindJob: async (req, context) => {
      record("bindJob", req, context);
      existing(req.instance);
      return { JOB_TOKEN: "job-secret-value" };
    },
    unbindJob: async (req, context) => {
      record("unbindJob", req, context);
      existing(req.instance);
    },
    status: async (req, context) => {
      record("status", req, context);
      existing(req.instance);
      return "running" as const;
    },
    info: async (req, context) => {
      record("info", req, context);
      existing(req.instance);
      return [{ label: "Plan", value: instances.get(req.instance)?.plan ?? "default" }];
    },
    ...overrides,
  };
  /** The request the last call to `handler` received. */
  const last = (handler: string): unknown => [...received].reverse().find((call) => call.handler === handler)?.request;
  return { handlers, instances, received, last };
}

export interface Running {
  provider: Provider;
  server: Server;
  url: string;
  /** supertest bound to the running server. */
  http: ReturnType<typeof request>;
  logs: LogLine[];
  /** The raw log text, to grep for secrets. */
  logText(): string;
  stop(): Promise<void>;
}

const running = new Set<Running>();

/** Listens on a free loopback port with `provider.listen()` (test/http/serving.test.ts serves it every other way too). */
export function serve(provider: Provider): Promise<Server> {
  return new Promise<Server>((resolve) => {
    const listening = provider.listen(0, "127.0.0.1", () => resolve(listening));
  });
}

/** Start a provider on 127.0.0.1 with a captured log. Options default to `auth: AUTH, registry: false`. */
export async function start(handlers: ProviderHandlers, options: Partial<ProviderOptions> = {}): Promise<Running> {
  const chunks: string[] = [];
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const text = chunk.toString();
      chunks.push(text);
      for (const line of text.split("\n")) if (line.trim() !== "") logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const provider = createProvider(handlers, {
    auth: AUTH,
    registry: false,
    logger: pino({ level: "debug" }, sink),
    ...options,
  });
  const server = await serve(provider);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const instance: Running = {
    provider,
    server,
    url,
    http: request(url),
    logs,
    logText: () => chunks.join(""),
    async stop() {
      running.delete(instance);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await provider.close();
    },
  };
  running.add(instance);
  return instance;
}

/** Stop every provider a test left running (call from afterEach). */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((each) => each.stop()));
}

/** Log lines of finished requests (one per request). */
export function requestLines(logs: LogLine[]): LogLine[] {
  return logs.filter((line) => line.msg === "request" || line.msg === "request failed");
}

export const FORM = "application/x-www-form-urlencoded";
