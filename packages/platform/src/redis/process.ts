/**
 * What a program that runs redis-servers needs of its own process: exclusive use of its data
 * directory (two programs on one directory would stop each other's servers), and stopping when
 * the process that started it is gone (a supervisor or npm killed without passing the signal on).
 */
import { randomBytes } from "node:crypto";
import { link, mkdir, readFile, readlink, rm, stat, writeFile } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

const LOCK_FILE = "provider.lock";

/** Who takes a data directory, for the message a second one gets: "provider" and `DATA_DIR` by default. */
export interface DataDirOwner {
  /** What the holder is, e.g. "provider" or "platform". */
  kind: string;
  /** The setting that chooses the directory, e.g. `DATA_DIR` or `--data-dir`. */
  setting: string;
}

const PROVIDER: DataDirOwner = { kind: "provider", setting: "DATA_DIR" };

/** Another live process holds the data directory. */
export class DataDirLockedError extends Error {
  constructor(dir: string, holder: number, lockFile: string, owner: DataDirOwner = PROVIDER) {
    super(
      `Another ${owner.kind} (pid ${holder}) is using the data directory ${dir}. ` +
        `Stop it first, or set ${owner.setting} to another folder. If no such process is a ${owner.kind}, delete ${lockFile}.`,
    );
    this.name = "DataDirLockedError";
  }
}

/** true while a process with this pid exists (EPERM: it does, under another user). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface DataDirLock {
  /** The absolute path of the locked directory. */
  dir: string;
  release(): Promise<void>;
}

/** Tries at taking a lock whose holder is dead, while others try too. */
const MAX_ATTEMPTS = 100;

/** Directories this process holds: a lock file naming our own pid is ours only if listed here. */
const heldHere = new Set<string>();

/** The pid a lock file names, or undefined when it names none (an older, half-written lock). */
async function holderOf(lockFile: string): Promise<number | undefined> {
  return pidIn(await readFile(lockFile, "utf8").catch(() => ""));
}

/** The program a process runs, by its file name (`node`); undefined when it cannot be read. */
async function programOf(pid: number | "self"): Promise<string | undefined> {
  const path = await readlink(`/proc/${pid}/exe`).catch(() => undefined);
  return path === undefined ? undefined : basename(path.replace(/ \(deleted\)$/, "")); // an upgraded binary still runs
}

/** Linux's clock ticks per second in /proc (USER_HZ), 100 on every architecture Node.js runs on. */
const TICKS_PER_SECOND = 100;
/** The boot time in /proc/stat has whole seconds. */
const CLOCK_SLACK_MS = 2_000;

/** When a process started (ms since the epoch), from /proc; undefined when it cannot be read. */
async function startedAtMs(pid: number): Promise<number | undefined> {
  const [stat, boot] = await Promise.all([
    readFile(`/proc/${pid}/stat`, "utf8").catch(() => ""),
    readFile("/proc/stat", "utf8").catch(() => ""),
  ]);
  // Fields after the command's closing parenthesis (the command may hold spaces): starttime is the 20th.
  const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
  const bootSeconds = Number(/^btime (\d+)$/m.exec(boot)?.[1]);
  return Number.isFinite(ticks) && Number.isFinite(bootSeconds) ? bootSeconds * 1000 + (ticks * 1000) / TICKS_PER_SECOND : undefined;
}

/**
 * Whether the live process `pid` can be the provider that wrote the lock at `writtenAtMs`. On Linux
 * it must run the program we run (node) and have started before the lock was written: a container
 * restarted with `--init` has the init as pid 1, and a recycled pid belongs to a process started
 * later. Elsewhere (no /proc) being alive has to do.
 */
async function canHold(pid: number, writtenAtMs: number): Promise<boolean> {
  if (!isAlive(pid)) return false;
  if (process.platform !== "linux") return true;
  const [theirs, ours] = [await programOf(pid), await programOf("self")];
  if (ours !== undefined && theirs !== ours) return false; // another program, or one we may not look at (the init, another user's)
  const startedAt = await startedAtMs(pid);
  return startedAt === undefined || startedAt <= writtenAtMs + CLOCK_SLACK_MS;
}

function pidIn(content: string): number | undefined {
  const holder = Number.parseInt(content, 10);
  return Number.isInteger(holder) && holder > 0 ? holder : undefined;
}

/**
 * Creates `lockFile` holding our pid, or answers false when it exists. The pid is written to a
 * file of our own first and linked into place, so a lock file is never seen without its pid.
 */
async function createLock(lockFile: string): Promise<boolean> {
  const mine = `${lockFile}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(mine, `${process.pid}\n`, { mode: 0o600, flag: "wx" });
  try {
    await link(mine, lockFile);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    await rm(mine, { force: true });
  }
}

/** A takeover left by a process that died inside it (a few milliseconds' window) is cleared after this. */
const TAKEOVER_STALE_MS = 5_000;

/**
 * Removes the lock file if it still names `stale` (a dead holder). Only one process at a time
 * does this, holding the `.takeover` directory; and since nobody else removes a lock file, one
 * read under it still holds when the file is removed: two starters never both win.
 */
async function removeStaleLock(lockFile: string, stale: number | undefined): Promise<void> {
  const takeover = `${lockFile}.takeover`;
  try {
    await mkdir(takeover);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const since = await stat(takeover).then((info) => Date.now() - info.mtimeMs, () => 0);
    if (since > TAKEOVER_STALE_MS) await rm(takeover, { recursive: true, force: true });
    else await sleep(20);
    return; // the caller looks at the lock again
  }
  try {
    const content = await readFile(lockFile, "utf8").catch(() => undefined);
    if (content !== undefined && pidIn(content) === stale) await rm(lockFile, { force: true });
  } finally {
    await rm(takeover, { recursive: true, force: true });
  }
}

/**
 * Takes `dir` for this process: `provider.lock` is created exclusively and holds our pid. A lock
 * whose holder is gone (a crash, SIGKILL) is taken over, and so is one whose pid is now another
 * process's (`canHold`: the init of a container restarted with `--init`, a recycled pid), or
 * names our own pid that this process does not hold (a container's PID 1 restarted after a
 * crash); one whose holder lives refuses with `DataDirLockedError`, before anything in the
 * directory is touched.
 */
export async function lockDataDir(dir: string, owner: DataDirOwner = PROVIDER): Promise<DataDirLock> {
  const absolute = resolve(dir);
  const lockFile = join(absolute, LOCK_FILE);
  await mkdir(absolute, { recursive: true, mode: 0o700 });
  for (let attempt = 0; !(await createLock(lockFile)); attempt++) {
    const [holder, writtenAtMs] = await Promise.all([holderOf(lockFile), stat(lockFile).then((info) => info.mtimeMs, () => Date.now())]);
    const held = holder === process.pid ? heldHere.has(absolute) : holder !== undefined && (await canHold(holder, writtenAtMs));
    if (held || attempt >= MAX_ATTEMPTS) throw new DataDirLockedError(absolute, holder ?? 0, lockFile, owner);
    await removeStaleLock(lockFile, holder);
  }
  heldHere.add(absolute);
  let released = false;
  return {
    dir: absolute,
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(absolute);
      if ((await holderOf(lockFile)) === process.pid) await rm(lockFile, { force: true });
    },
  };
}

/**
 * Calls `onGone` once when the parent process exits (we are re-parented: our ppid changes),
 * checking every `intervalMs`. Does nothing when started by init or a container runtime (ppid
 * 0 or 1), whose end ends us anyway. The timer never keeps the process alive.
 */
export function onParentExit(onGone: () => void, intervalMs = 1_000): () => void {
  const parent = process.ppid;
  if (parent <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
