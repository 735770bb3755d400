/**
 * Runs `redis-server` processes: the embedded server the provider administers and every
 * dedicated instance. One server is fully described by its directory: the provider writes
 * `redis.conf` and `users.acl` there, the process id is in `redis.pid` (written by the provider
 * once it spawned the server, and by the server itself), and the server keeps its data and log
 * there. A provider that restarts finds, adopts or stops a server an earlier run started by
 * looking at that directory alone.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { access, constants, mkdir, open, readFile, readlink, realpath, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { delimiter, isAbsolute, join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { answersPing, type Address } from "@provider-kit/redis-store/connection";
import { isAlive } from "./process.js";
import { SharedRuns } from "provider-kit/store";

export interface RedisServerSpec {
  /** Data directory; the process runs with it as working directory. */
  dir: string;
  port: number;
  /** Password of the `default` user, the server's administrator. */
  password: string;
  /** Redis `maxmemory` value (e.g. `64mb`); absent: no limit. */
  maxmemory?: string;
  /** Redis `maxmemory-policy` (e.g. `noeviction`, `allkeys-lru`); absent: Redis's default, `noeviction`. */
  maxmemoryPolicy?: string;
  /**
   * true: every write reaches the disk before Redis answers (`appendfsync always`). Default
   * (`everysec`) can lose the last writes when the process is killed: Redis postpones a write
   * while a background fsync runs. Right for a registry, whose writes are few and must not be lost.
   */
  syncEveryWrite?: boolean;
  /**
   * true: the process gets its own session and outlives the provider (dedicated instances keep
   * serving apps while the provider restarts). false: it is the provider's child (embedded server).
   */
  detached: boolean;
  /** The `redis-server` executable: a name looked up on PATH, or a path. */
  binary: string;
}

const LOOPBACK = "127.0.0.1";
const PID_FILE = "redis.pid";
const LOG_FILE = "redis.log";
const ACL_FILE = "users.acl";

/** The executable is not installed: say how to install it. */
export class RedisServerNotFoundError extends Error {
  constructor(binary: string) {
    super(
      `Cannot run "${binary}": redis-server is not installed or not on PATH. ` +
        "Install it (Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis) " +
        "or set REDIS_SERVER to its path.",
    );
    this.name = "RedisServerNotFoundError";
  }
}

/** Asks the operating system for a loopback port nobody listens on. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, LOOPBACK, resolve);
  });
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (address === null || typeof address === "string") throw new Error("Could not read the port the OS gave.");
  return address.port;
}

/**
 * Runs `start` on a port that is free right now, and again on another one if a process took
 * that port before the server bound it: a free port cannot be held for a child process.
 */
export async function startOnFreePort<T>(start: (port: number) => Promise<T>, tries = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start(await freePort());
    } catch (error) {
      if (attempt >= tries || !/address already in use/i.test(error instanceof Error ? error.message : String(error))) throw error;
    }
  }
}

export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  const free = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false));
    server.listen(port, LOOPBACK, () => resolve(true));
  });
  if (free) await new Promise((resolve) => server.close(resolve));
  return free;
}

// ---------------------------------------------------------------------------
// Starting.

const starting = new SharedRuns<string, void>();

/**
 * Makes sure the server of `spec.dir` runs and answers PING. Idempotent: a server that already
 * answers (started by this run or an earlier one) is adopted; one that is still starting is
 * waited for; otherwise a new process is spawned. Concurrent calls for one directory share one start.
 */
export function ensureRedisServer(spec: RedisServerSpec, options: { signal?: AbortSignal; timeoutMs?: number } = {}) {
  return starting.run(spec.dir, () => startOrAdopt(spec, options.timeoutMs ?? 20_000, options.signal));
}

function addressOf(spec: RedisServerSpec): Address {
  return { host: LOOPBACK, port: spec.port, password: spec.password };
}

async function startOrAdopt(spec: RedisServerSpec, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  if (await answersPing(addressOf(spec))) return;
  const pid = (await runningPid(spec.dir)) ?? (await launch(spec)).pid!;
  await untilAnswering(spec, pid, timeoutMs, signal);
}

/** Writes the server's files and spawns it, recording its pid. */
async function launch(spec: RedisServerSpec): Promise<ChildProcess> {
  await writeServerFiles(spec);
  const child = await spawnServer(spec);
  await writeFile(join(spec.dir, PID_FILE), `${child.pid}\n`);
  return child;
}

async function untilAnswering(spec: RedisServerSpec, pid: number, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await answersPing(addressOf(spec)))) {
    signal?.throwIfAborted();
    if (!isAlive(pid)) throw new Error(`redis-server exited before answering. ${await logTail(spec.dir)}`);
    if (Date.now() > deadline) {
      throw new Error(`redis-server did not answer on port ${spec.port} within ${timeoutMs} ms. ${await logTail(spec.dir)}`);
    }
    await sleep(100);
  }
}

// ---------------------------------------------------------------------------
// Supervising a child server.

/** A redis-server run as the provider's child and kept running: see `superviseRedisServer`. */
export interface SupervisedRedisServer {
  address: Address;
  /** Stops restarting it, then stops it. */
  stop(): Promise<void>;
}

/** Where the supervisor reports restarts: a pino logger fits, or anything with these two methods. */
export interface SupervisionLog {
  info(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}

/** The supervisor's reports as terminal lines, `<prefix><message> (port 6379, pid 42...)`: errors to `warn`. */
export function lineSupervisionLog(prefix: string, say: (line: string) => void, warn: (line: string) => void = say): SupervisionLog {
  const line = (details: Record<string, unknown>, message: string) => {
    const facts = Object.entries(details).map(([key, value]) => `${key} ${value instanceof Error ? value.message : String(value)}`);
    return `${prefix}${message} (${facts.join(", ")})`;
  };
  return { info: (details, message) => say(line(details, message)), error: (details, message) => warn(line(details, message)) };
}

export interface SupervisionOptions {
  log: SupervisionLog;
  /** Wait before the first restart, doubled after each restart that did not last. Default 200 ms. */
  firstBackoffMs?: number;
  /** Longest wait between two restarts. Default 10 000 ms. */
  maxBackoffMs?: number;
  /** A run that lasted this long resets the back-off. Default 30 000 ms. */
  stableAfterMs?: number;
  /** Longest wait for the first start to answer PING. Default 20 000 ms. */
  timeoutMs?: number;
}

/**
 * Starts a server as the provider's child (a leftover of a crashed earlier run in `spec.dir` is
 * stopped first: it has that run's password) and restarts it whenever it exits until `stop()`,
 * waiting longer after each quick death so a server that cannot start does not spin. Data and
 * ACL users survive a restart (append-only file, ACL file), and clients that reconnect find it
 * on the same port. Resolves once the first start answers PING.
 */
export async function superviseRedisServer(
  spec: Omit<RedisServerSpec, "detached">,
  options: SupervisionOptions,
): Promise<SupervisedRedisServer> {
  const child: RedisServerSpec = { ...spec, detached: false };
  const { log } = options;
  const firstBackoffMs = options.firstBackoffMs ?? 200;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const stableAfterMs = options.stableAfterMs ?? 30_000;
  const where = { dir: spec.dir, port: spec.port };
  let backoffMs = firstBackoffMs;
  /** Set once the first start answered: before that, an exit fails the start instead. */
  let supervising = false;
  let stopped = false;
  let restartTimer: NodeJS.Timeout | undefined;

  const run = async (): Promise<number> => {
    const server = await launch(child);
    const startedAt = Date.now();
    server.once("exit", (code, signal) => {
      if (stopped || !supervising) return;
      if (Date.now() - startedAt >= stableAfterMs) backoffMs = firstBackoffMs;
      scheduleRestart({ ...where, code, signal }, "redis-server exited");
    });
    return server.pid!;
  };

  const scheduleRestart = (details: Record<string, unknown>, message: string): void => {
    const waitMs = backoffMs;
    backoffMs = Math.min(backoffMs * 2, maxBackoffMs);
    log.error({ ...details, restartInMs: waitMs }, `${message}; restarting it`);
    restartTimer = setTimeout(() => void restart(), waitMs);
  };

  const restart = async (): Promise<void> => {
    if (stopped) return;
    let pid: number;
    try {
      pid = await run();
    } catch (error) {
      return scheduleRestart({ ...where, err: error }, "redis-server could not be started");
    }
    // A restart that dies before answering is reported by its exit handler.
    untilAnswering(child, pid, options.timeoutMs ?? 20_000).then(
      () => !stopped && log.info({ ...where, pid }, "redis-server restarted and answers"),
      () => {},
    );
  };

  await stopRedisServer(spec.dir);
  try {
    await untilAnswering(child, await run(), options.timeoutMs ?? 20_000);
    supervising = true;
  } catch (error) {
    stopped = true;
    await stopRedisServer(spec.dir);
    throw error;
  }
  return {
    address: addressOf(child),
    async stop() {
      stopped = true;
      clearTimeout(restartTimer);
      await stopRedisServer(spec.dir);
    },
  };
}

/** The config is rewritten at every start, so it always follows the spec (plan limits, port). */
async function writeServerFiles(spec: RedisServerSpec): Promise<void> {
  await mkdir(spec.dir, { recursive: true, mode: 0o700 });
  const config = [
    "# Written by the provider at every start of this server: change the provider, not this file.",
    `bind ${LOOPBACK}`,
    `port ${spec.port}`,
    // Relative paths: the process runs in its directory, so no path ever needs quoting here.
    "dir ./",
    `aclfile ${ACL_FILE}`,
    `logfile ${LOG_FILE}`,
    // The server records its pid itself as soon as it listens (and removes it when it stops): a
    // provider killed between spawning it and writing that file still leaves it findable.
    `pidfile ${PID_FILE}`,
    "appendonly yes",
    ...(spec.maxmemory ? [`maxmemory ${spec.maxmemory}`] : []),
    ...(spec.maxmemoryPolicy ? [`maxmemory-policy ${spec.maxmemoryPolicy}`] : []),
    ...(spec.syncEveryWrite ? ["appendfsync always"] : []),
    "",
  ].join("\n");
  await writeFile(join(spec.dir, "redis.conf"), config, { mode: 0o600 });
  await writeAclFile(spec);
}

/** How Redis lists a user's passwords (ACL GETUSER, ACL files): SHA-256, in hex. */
export function aclPasswordHash(password: string): string {
  return createHash("sha256").update(password).digest("hex");
}

/**
 * Users added by bindings are saved into the ACL file by Redis (ACL SAVE) and kept here;
 * only the `default` line is replaced, with a hash so no password is stored in clear on disk.
 */
async function writeAclFile(spec: RedisServerSpec): Promise<void> {
  const path = join(spec.dir, ACL_FILE);
  const previous = await readFile(path, "utf8").catch(() => "");
  const others = previous.split("\n").filter((line) => line.trim() !== "" && !line.startsWith("user default "));
  await writeFile(path, [`user default on #${aclPasswordHash(spec.password)} ~* &* +@all`, ...others, ""].join("\n"), { mode: 0o600 });
}

/** The absolute path of an executable: `name` as a path, or looked up on PATH; undefined when none. */
async function findExecutable(name: string): Promise<string | undefined> {
  const candidates = name.includes("/")
    ? [name]
    : (process.env.PATH ?? "").split(delimiter).filter(isAbsolute).map((dir) => join(dir, name));
  for (const candidate of candidates) {
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  return undefined;
}

/**
 * How a child server is told its provider died, even by SIGKILL: Linux's parent-death signal,
 * set by util-linux `setpriv`, which then execs the command it is given (same pid): the words to
 * put before that command. Where it is missing (macOS) an orphaned server is stopped by the
 * provider's next start instead. `provider-kit dev` starts its provider the same way.
 */
let setpriv: Promise<string | undefined> | undefined;
export async function parentDeathWrapper(): Promise<string[]> {
  if (process.platform !== "linux") return [];
  const path = await (setpriv ??= findExecutable("setpriv"));
  return path === undefined ? [] : [path, "--pdeathsig", "TERM", "--"];
}

async function spawnServer(spec: RedisServerSpec): Promise<ChildProcess> {
  const binary = await findExecutable(spec.binary);
  if (binary === undefined) throw new RedisServerNotFoundError(spec.binary);
  const [command, ...args] = [...(spec.detached ? [] : await parentDeathWrapper()), binary, "redis.conf"];
  // Output goes to the log file too: a config error is printed before Redis opens its log.
  const log = await open(join(spec.dir, LOG_FILE), "a");
  try {
    const child = spawn(command, args, {
      cwd: spec.dir,
      // A session of its own, child server too: Ctrl-C signals the terminal's foreground process
      // group, and a child server in it would exit at once and be reported as a crash while the
      // provider is stopping it. The provider stops it; the parent-death signal still reaches it.
      detached: true,
      stdio: ["ignore", log.fd, log.fd],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    if (spec.detached) child.unref();
    return child;
  } finally {
    await log.close();
  }
}

async function logTail(dir: string): Promise<string> {
  const log = await readFile(join(dir, LOG_FILE), "utf8").catch(() => "");
  const last = log.trim().split("\n").slice(-3).join(" | ");
  return last ? `Its log says: ${last}` : "It wrote no log.";
}

// ---------------------------------------------------------------------------
// Finding and stopping.

/**
 * The pid recorded in `dir` when that process still runs in `dir`. The working-directory check
 * (Linux) keeps a recycled pid, after a reboot, from being taken for ours and signalled.
 */
export async function runningPid(dir: string): Promise<number | undefined> {
  const pid = Number.parseInt(await readFile(join(dir, PID_FILE), "utf8").catch(() => ""), 10);
  if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
  const cwd = await readlink(`/proc/${pid}/cwd`).catch(() => undefined);
  if (cwd === undefined) return process.platform === "linux" ? undefined : pid;
  return cwd === (await realpath(dir).catch(() => dir)) ? pid : undefined;
}

/** Stops the server of `dir` (SIGTERM, then SIGKILL if it lingers). Does nothing when none runs. */
export async function stopRedisServer(dir: string, timeoutMs = 10_000): Promise<void> {
  const pid = await runningPid(dir);
  if (pid !== undefined) {
    process.kill(pid, "SIGTERM");
    if (!(await exited(pid, timeoutMs))) {
      process.kill(pid, "SIGKILL");
      await exited(pid, timeoutMs);
    }
  }
  await rm(join(dir, PID_FILE), { force: true });
}

async function exited(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() > deadline) return false;
    await sleep(50);
  }
  return true;
}

/** Stops the server of `dir` and deletes the directory with its data. */
export async function removeRedisServer(dir: string): Promise<void> {
  await stopRedisServer(dir);
  await rm(dir, { recursive: true, force: true });
}
