/**
 * A real, throw-away `redis-server` for tests.
 *
 *   const redis = await startRedisServer();      // listening on 127.0.0.1:<free port>
 *   ... use redis.url ...
 *   await redis.stop();                          // process gone, data dir removed
 *
 * Each server gets a free loopback port and its own temporary directory, and keeps no data on
 * disk (`--save "" --appendonly no`) unless `{ persistence: true }` asks for an append-only file.
 * A server dies with the process (or worker thread) that started it, and is recorded until
 * stopped: the run fails if one a test started outlives it (test/support/server-records.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { forget, remember, testFileIn } from "./server-records.js";

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Its process id (a test can kill it with SIGKILL, as a crash would; `stop` still cleans up). */
  pid: number;
  /** The server's working directory (where an append-only file goes with `persistence`). */
  dir: string;
  /** Stop the server (waits for it to exit) and delete its directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface RedisServerOptions {
  /** Keep an append-only file in `dir`. Default false. */
  persistence?: boolean;
  /** Listen on this port (e.g. to bring a stopped server back where clients expect it). Default: a free one. */
  port?: number;
  /** Longest wait for the server to accept connections. Default 30 000 ms. */
  startTimeoutMs?: number;
  /** More arguments for the server, e.g. `["--replicaof", "127.0.0.1 6379"]`. */
  args?: string[];
  /** Run `redis-sentinel` with this configuration file text instead of `redis-server`. */
  sentinelConfig?: string;
}

/** The executable every test starts (`REDIS_SERVER_BIN` overrides it). */
export const REDIS_SERVER = process.env.REDIS_SERVER_BIN ?? "/usr/bin/redis-server";
/** The sentinel executable (`REDIS_SENTINEL_BIN` overrides it). */
const REDIS_SENTINEL = process.env.REDIS_SENTINEL_BIN ?? "/usr/bin/redis-sentinel";

/** A port nobody listens on right now (redis-server cannot pick one itself and report it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/**
 * The `process_id` of the Redis server answering PING on the port, or undefined when none does.
 * Compared with our child's pid: another test's server may hold the port we picked (it got the
 * same free port at the same moment), and answering PING would make it pass for ours.
 */
function answeringPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = new Socket();
    let reply = "";
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.setTimeout(1_000, () => done(undefined));
    socket.once("error", () => done(undefined));
    socket.on("data", (data) => {
      reply += data.toString();
      if (reply.startsWith("-")) return done(undefined); // PING answered LOADING: not ready yet
      const pid = /process_id:(\d+)\r\n/.exec(reply)?.[1];
      if (pid !== undefined) done(Number(pid));
    });
    socket.connect(port, "127.0.0.1", () => socket.write("PING\r\nINFO server\r\n"));
  });
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once("exit", () => resolve()));
}

/**
 * The command with Linux's parent-death signal set by util-linux `setpriv`, which then execs the
 * server (same pid): when the test process (or the worker thread) that started it ends, even by
 * SIGKILL or a timeout, the server is killed too, instead of running on under pid 1.
 */
function withParentDeathSignal(binary: string, args: string[]): [string, string[]] {
  return SETPRIV === undefined ? [binary, args] : [SETPRIV, ["--pdeathsig", "KILL", "--", binary, ...args]];
}

const SETPRIV = process.platform === "linux" ? ["/usr/bin/setpriv", "/bin/setpriv"].find((file) => existsSync(file)) : undefined;

async function launch(dir: string, options: RedisServerOptions, startedBy: string): Promise<RedisServer | undefined> {
  const port = options.port ?? (await freePort());
  const persistence = options.persistence ? ["--appendonly", "yes"] : ["--appendonly", "no"];
  const common = ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no", ...(options.args ?? [])];
  let command = [REDIS_SERVER, ...common, "--save", "", ...persistence];
  if (options.sentinelConfig !== undefined) {
    // A sentinel rewrites its configuration file as it learns the group, so it gets its own.
    const file = join(dir, "sentinel.conf");
    await writeFile(file, options.sentinelConfig);
    command = [REDIS_SENTINEL, file, ...common];
  }
  const [binary, ...args] = command as [string, ...string[]];
  const child = spawn(...withParentDeathSignal(binary, args), { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (output += chunk.toString()));
  if (child.pid !== undefined) remember({ pid: child.pid, command: `${binary} on port ${port}`, dir, startedBy });
  const stop = async () => {
    child.kill("SIGTERM");
    await exited(child);
    if (child.pid !== undefined) forget(child.pid);
  };

  const deadline = Date.now() + (options.startTimeoutMs ?? 30_000); // a loaded machine starts it slowly; an early PING ends the wait
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      forget(child.pid!);
      // Another process took the port between our check and the server's bind: try another.
      if (/address already in use/i.test(output) && options.port === undefined) return undefined;
      throw new Error(`${binary} exited with code ${child.exitCode}:\n${output}`);
    }
    if ((await answeringPid(port)) === child.pid) return { url: `redis://127.0.0.1:${port}`, port, pid: child.pid!, dir, stop };
    await sleep(50);
  }
  await stop();
  throw new Error(`${binary} did not answer PING on port ${port} in time:\n${output}`);
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const startedBy = testFileIn(new Error().stack);
  const dir = await mkdtemp(join(tmpdir(), "provider-kit-redis-"));
  try {
    for (let tries = 0; tries < 5; tries++) {
      const server = await launch(dir, options, startedBy);
      if (!server) continue;
      let stopped: Promise<void> | undefined;
      return {
        ...server,
        stop: () =>
          (stopped ??= server.stop().then(() => rm(dir, { recursive: true, force: true }))),
      };
    }
    throw new Error("redis-server could not get a free port after 5 tries.");
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

export { isAlive } from "@provider-kit/platform/redis-process";
