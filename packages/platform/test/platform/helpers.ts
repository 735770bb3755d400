/**
 * Test harness for the local platform: a platform on a real loopback port (memory store or a
 * real redis-server), an API client that logs in as the admin (test/support/platform-api.ts), and
 * providers built with createProvider (test/support/fake-provider.ts) that record every call
 * they receive.
 */
import { stringify } from "yaml";
import { startPlatform, type PlatformOptions, type RunningPlatform } from "../../src/platform/platform.js";
import { fakeResource, PASSWORD, start, USER, type Running } from "../../../../test/support/fake-provider.js";
import { startRedisServer, type RedisServer } from "../../../../test/support/redis-server.js";
import { gate } from "../../../../test/support/gate.js";
import { ADMIN, Api } from "../../../../test/support/platform-api.js";
import { MemoryStore, type ProviderHandlers } from "provider-kit";

export { ADMIN, Api } from "../../../../test/support/platform-api.js";

export type StoreKind = "memory" | "redis";
export const STORES: StoreKind[] = ["memory", "redis"];

export interface TestPlatform {
  platform: RunningPlatform;
  url: string;
  /** Logged in as the admin (team `admin`). */
  admin: Api;
  anonymous: Api;
  stop(): Promise<void>;
}

export async function startTestPlatform(kind: StoreKind, options: Partial<PlatformOptions> = {}): Promise<TestPlatform> {
  let redis: RedisServer | undefined;
  if (kind === "redis") redis = await startRedisServer();
  const platform = await startPlatform({
    port: 0,
    host: "127.0.0.1",
    admin: ADMIN,
    state: redis ? { kind: "redis", url: redis.url } : { kind: "memory" },
    version: "0.0.0-test",
    providerCalls: { timeoutMs: 5_000, connectTimeoutMs: 2_000 },
    report: (error) => console.error("platform error", error),
    // The suites run commands; run's default (off) and its rules are tested in security.test.ts.
    allowRun: true,
    ...options,
  });
  const anonymous = new Api(platform.url);
  return {
    platform,
    url: platform.url,
    admin: await anonymous.login(ADMIN.email, ADMIN.password),
    anonymous,
    async stop() {
      await platform.close();
      await redis?.stop();
    },
  };
}

/** A service manifest, as `POST /services` takes it. */
export function manifest(id: string, url: string, extra: Record<string, unknown> = {}): string {
  return stringify({ id, username: USER, password: PASSWORD, endpoint: { production: url }, ...extra });
}

export interface TestProvider {
  running: Running;
  received: ReturnType<typeof fakeResource>["received"];
  /** Names of the handlers called, in order. */
  handlers(): string[];
  stop(): Promise<void>;
}

/** A provider built with createProvider whose handlers record each call; `overrides` replace handlers. */
export async function startTestProvider(overrides: Partial<ProviderHandlers> = {}): Promise<TestProvider> {
  const resource = fakeResource(overrides);
  const running = await start(resource.handlers);
  return {
    running,
    received: resource.received,
    handlers: () => resource.received.map((call) => call.handler),
    stop: () => running.stop(),
  };
}

export interface ProgressProvider {
  url: string;
  /** Settles once the background create has reported its progress. */
  reported: Promise<void>;
  /** Lets the background create finish: the instance becomes ready. */
  finish(): void;
  stop(): Promise<void>;
}

/** A provider whose creates go to the background, report `message` as their progress, and wait for `finish()`. */
export async function startProgressProvider(message: string): Promise<ProgressProvider> {
  const reported = gate();
  const finished = gate();
  const running = await start(
    {
      create: () => ({ pending: true }),
      provision: async (_record, ctx) => {
        await ctx.progress(message);
        reported.open();
        await finished.opened;
      },
      destroy: () => {},
      bindApp: () => ({}),
      unbindApp: () => {},
    },
    { registry: { store: new MemoryStore() } },
  );
  return {
    url: running.url,
    reported: reported.opened,
    finish: () => finished.open(),
    stop: async () => {
      finished.open();
      await running.stop();
    },
  };
}

/** Today's command-line client (`tsuru` 1.34), as it sends its requests and reads their answers. */
const CLIENT_FORM = "application/x-www-form-urlencoded";

export interface Reply {
  status: number;
  contentType: string;
  text: string;
}

/** A request as the Go client builds it: url.Values.Encode sorts the keys. */
export async function tsuru(url: string, token: string | undefined, method: string, path: string, form?: Record<string, string | string[]>): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token) headers.Authorization = `bearer ${token}`;
  let body: string | undefined;
  if (form) {
    const values = new URLSearchParams();
    for (const key of Object.keys(form).sort()) for (const value of [form[key]!].flat()) values.append(key, value);
    body = values.toString();
    headers["Content-Type"] = CLIENT_FORM;
  }
  const response = await fetch(`${url}${path}`, { method, headers, body });
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", text: await response.text() };
}

/** The client's stream reader: one JSON object per line; an `Error` fails the command. */
export function readStream(reply: Reply): { messages: string[]; error?: string } {
  // No vitest `expect` here: `npm run screenshots` imports this module outside vitest.
  if (reply.status !== 200 || reply.contentType !== "application/x-json-stream") {
    throw new Error(`expected a 200 application/x-json-stream answer, got ${reply.status} ${reply.contentType}: ${reply.text.slice(0, 200)}`);
  }
  const lines = reply.text.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { Message: string; Error?: string });
  return { messages: lines.map((line) => line.Message).filter((message) => message !== ""), error: lines.find((line) => line.Error)?.Error };
}
