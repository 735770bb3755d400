/**
 * Test helpers for the Redis provider: the platform's side of the HTTP calls, an app's side
 * of a binding, a shared setup; with what test/support has for every package's tests (the
 * example started in-process, its data directories and their clean-up, app clients, polling).
 */
import { execFile } from "node:child_process";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { createClient } from "@redis/client";
import { isAlive, REDIS_SERVER, startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { killServersUnder, slowRedisServer, tempDir } from "../../../test/support/data-dirs.js";
import { appClient, appClients, PASSWORD, startTestProvider, testConfig, type AppClient } from "../../../test/support/redis-example.js";
import type { RunningProvider } from "../redis-provider.js";

export { isAlive, REDIS_SERVER };
export { eventually } from "../../../test/support/eventually.js";
export { appClient, appClients, killServersUnder, PASSWORD, slowRedisServer, startTestProvider, tempDir, testConfig };

export interface Answer {
  status: number;
  text: string;
}

/** The platform: form-encoded calls with Basic auth, as Tsuru sends them. */
export function platform(baseUrl: string) {
  const authorization = `Basic ${Buffer.from(`redis:${PASSWORD}`).toString("base64")}`;
  const call = async (method: string, path: string, form: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: { authorization, accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
      body: method === "GET" ? undefined : new URLSearchParams(form).toString(),
    });
    return { status: response.status, text: await response.text() };
  };
  return {
    plans: () => call("GET", "/resources/plans"),
    create: (name: string, plan: string) => call("POST", "/resources", { name, plan, team: "team-a", user: "admin@example.com" }),
    status: (name: string) => call("GET", `/resources/${name}/status`),
    info: (name: string) => call("GET", `/resources/${name}`),
    bindApp: (name: string, app: string) =>
      call("POST", `/resources/${name}/bind-app`, { "app-name": app, "app-host": `${app}.apps.example.com` }),
    unbindApp: (name: string, app: string) =>
      call("DELETE", `/resources/${name}/bind-app`, { "app-name": app, "app-host": `${app}.apps.example.com` }),
    bindUnit: (name: string, app: string, unitHost: string) =>
      call("POST", `/resources/${name}/bind`, { "app-name": app, "app-host": `${app}.apps.example.com`, "unit-host": unitHost }),
    unbindUnit: (name: string, app: string, unitHost: string) =>
      call("DELETE", `/resources/${name}/bind`, { "app-name": app, "app-host": `${app}.apps.example.com`, "unit-host": unitHost }),
    bindJob: (name: string, job: string) => call("PUT", `/resources/${name}/binds/jobs/${job}`, { "job-name": job }),
    bindHostname: (name: string, hostname: string) => call("POST", `/resources/${name}`, { hostname }),
    unbindHostname: (name: string, hostname: string) => call("DELETE", `/resources/${name}/hostname/${hostname}`),
    destroy: (name: string) => call("DELETE", `/resources/${name}`, { user: "admin@example.com" }),
    /** A custom action under the instance, as the platform's proxy forwards it. */
    action: (method: string, name: string, path: string, form?: Record<string, string>) => call(method, `/resources/${name}${path}`, form),
  };
}

/** The broker: OSB calls as a platform makes them, Basic auth with the provider's credentials, the version header, JSON. */
export function broker(baseUrl: string) {
  return async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`redis:${PASSWORD}`).toString("base64")}`,
        "x-broker-api-version": "2.17",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
}

/** The env of a successful bind, checked to hold strings only (the platform rejects anything else). */
export function bindEnv(answer: Answer): Record<string, string> {
  if (answer.status !== 201) throw new Error(`bind answered ${answer.status}: ${answer.text}`);
  const env = JSON.parse(answer.text) as Record<string, unknown>;
  for (const [name, value] of Object.entries(env)) {
    if (typeof value !== "string") throw new Error(`${name} is not a string`);
  }
  return env as Record<string, string>;
}

/**
 * What Redis answers an app that logs in with its environment and sets a key under its prefix:
 * "OK", or the error it answered (`WRONGPASS ...`). One raw connection per call: node-redis builds
 * a client class per `createClient` (about 0.1 s of CPU each on a loaded machine), and a test
 * trying dozens of apps in a loop starved the provider it runs in-process with.
 */
export function appSetsKey(env: Record<string, string>): Promise<string> {
  const timeoutMs = 30_000; // a loaded machine
  const command = (...parts: string[]) => `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join("")}`;
  return new Promise((resolve) => {
    const socket = connect(Number(env.REDIS_PORT), env.REDIS_HOST);
    let replies = "";
    const done = (answer: string) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(`no answer within ${timeoutMs} ms`));
    socket.once("error", (error) => done(error.message));
    // A server that goes away (a crash under way) closes the connection without an error.
    socket.once("close", () => done("the connection closed before Redis answered"));
    socket.on("data", (data) => {
      replies += data.toString();
      const lines = replies.split("\r\n");
      if (lines.length < 2) return;
      if (lines[0]!.startsWith("-")) return done(lines[0]!.slice(1)); // the login refused
      if (lines.length >= 3) done(lines[1]!.replace(/^[+-]/, ""));
    });
    socket.write(command("AUTH", env.REDIS_USER!, env.REDIS_PASSWORD!) + command("SET", `${env.REDIS_KEY_PREFIX}k`, "v"));
  });
}

/**
 * What Redis answers an app that logs in with its environment (`AUTH` as its user) and runs
 * `commands` on one raw connection: one line per command, `OK`, the error (`NOPERM ...`), an
 * integer, a string, or `(nil)`. Throws when the login itself is refused.
 */
export function appRuns(env: Record<string, string>, commands: ReadonlyArray<readonly string[]>): Promise<string[]> {
  const timeoutMs = 30_000; // a loaded machine
  const encode = (parts: readonly string[]) => `*${parts.length}\r\n${parts.map((part) => `$${Buffer.byteLength(part)}\r\n${part}\r\n`).join("")}`;
  return new Promise((resolve, reject) => {
    const socket = connect(Number(env.REDIS_PORT), env.REDIS_HOST);
    let pending = Buffer.alloc(0);
    const replies: string[] = [];
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`${why} (after ${replies.length} replies)`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no answer within ${timeoutMs} ms`));
    socket.once("error", (error) => fail(error.message));
    socket.once("close", () => fail("the connection closed before Redis answered"));
    /** One reply off the front of `pending`: simple strings, errors, integers and bulk strings, as these commands answer. */
    const take = (): string | undefined => {
      const end = pending.indexOf("\r\n");
      if (end < 0) return undefined;
      const line = pending.subarray(1, end).toString();
      const type = String.fromCharCode(pending[0]!);
      if (type !== "$") {
        pending = pending.subarray(end + 2);
        return line;
      }
      const length = Number(line);
      if (length < 0) {
        pending = pending.subarray(end + 2);
        return "(nil)";
      }
      if (pending.length < end + 2 + length + 2) return undefined;
      const value = pending.subarray(end + 2, end + 2 + length).toString();
      pending = pending.subarray(end + 2 + length + 2);
      return value;
    };
    socket.on("data", (data) => {
      pending = Buffer.concat([pending, data]);
      for (let reply = take(); reply !== undefined; reply = take()) replies.push(reply);
      if (replies.length > 0 && replies[0] !== "OK") return fail(`the login was refused: ${replies[0]}`);
      if (replies.length < commands.length + 1) return;
      socket.removeAllListeners("close");
      socket.destroy();
      resolve(replies.slice(1));
    });
    socket.write([["AUTH", env.REDIS_USER!, env.REDIS_PASSWORD!], ...commands].map(encode).join(""));
  });
}

export interface SharedSetup {
  redis: RedisServer;
  /** Replaced, with `api`, by `restart`. */
  provider: RunningProvider;
  api: ReturnType<typeof platform>;
  /** The shared server's administrator, to look behind the provider's back. */
  admin: ReturnType<typeof administrator>;
  connect(env: Record<string, string>): Promise<AppClient>;
  /** Stops the provider and starts it again on the same server and data. */
  restart(): Promise<void>;
  /** Closes the apps and the administrator, stops the provider and its redis-server. */
  stop(): Promise<void>;
}

const administrator = (url: string) => createClient({ url });

/** A provider whose `shared` instances (and registry) live on a throw-away redis-server of its own. */
export async function startSharedSetup(name: string): Promise<SharedSetup> {
  const redis = await startRedisServer();
  const dataDir = await tempDir(name);
  const apps = appClients();
  const admin = administrator(redis.url);
  const config = testConfig({ dataDir, redisUrl: redis.url });
  let provider: RunningProvider | undefined;
  const stop = async () => {
    apps.closeAll();
    if (admin.isOpen) admin.destroy();
    await provider?.close();
    await killServersUnder(dataDir);
    await redis.stop();
  };
  try {
    provider = await startTestProvider(config);
    await admin.connect();
    const setup: SharedSetup = {
      redis,
      provider,
      api: platform(provider.url),
      admin,
      connect: apps.connect,
      async restart() {
        await provider?.close();
        provider = undefined;
        setup.provider = provider = await startTestProvider(config);
        setup.api = platform(provider.url);
      },
      stop,
    };
    return setup;
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The error message a command fails with (or "OK:<reply>" when it does not fail). */
export async function failure(command: Promise<unknown>): Promise<string> {
  try {
    return `OK:${String(await command)}`;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export async function pidIn(dir: string): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(join(dir, "redis.pid"), "utf8").catch(() => ""), 10);
  return Number.isInteger(pid) ? pid : undefined;
}

export function instanceDir(dataDir: string, instance: string): string {
  return join(dataDir, "instances", instance);
}

/**
 * Puts a file in `dir` that cannot be deleted (a read-only folder; `chattr +i` as root, whom
 * permissions do not stop). Returns the undo, or undefined when the file system cannot do it.
 */
export async function undeletableEntry(dir: string): Promise<(() => Promise<void>) | undefined> {
  const folder = join(dir, "read-only");
  const file = join(folder, "kept");
  await mkdir(folder);
  await writeFile(file, "");
  if (process.getuid?.() !== 0) {
    await chmod(folder, 0o555);
    return () => chmod(folder, 0o755);
  }
  const chattr = (flag: string) => promisify(execFile)("chattr", [flag, file]);
  if (!(await chattr("+i").then(() => true, () => false))) return undefined;
  return async () => void (await chattr("-i"));
}
