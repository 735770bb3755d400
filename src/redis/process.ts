/**
 * What a program that runs redis-servers needs of its own process: exclusive use of its data
 * directory (two programs on one directory would stop each other's servers), and stopping when
 * the process that started it is gone (a supervisor or npm killed without passing the signal on).
 */
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { join, resolve } from "node:path";
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

/**
 * Takes `dir` for this process: `provider.lock` is created exclusively and holds our pid. A lock
 * whose holder is dead (a crash, SIGKILL) is taken over; one whose holder lives refuses with
 * `DataDirLockedError`, before anything in the directory is touched.
 */
export async function lockDataDir(dir: string, owner: DataDirOwner = PROVIDER): Promise<DataDirLock> {
  const absolute = resolve(dir);
  const lockFile = join(absolute, LOCK_FILE);
  await mkdir(absolute, { recursive: true, mode: 0o700 });
  for (let attempt = 0; ; attempt++) {
    try {
      const file = await open(lockFile, "wx", 0o600);
      await file.writeFile(`${process.pid}\n`);
      await file.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST" || attempt >= 3) throw error;
    }
    const holder = Number.parseInt(await readFile(lockFile, "utf8").catch(() => ""), 10);
    const known = Number.isInteger(holder) && holder > 0;
    if (known && isAlive(holder)) throw new DataDirLockedError(absolute, holder, lockFile, owner);
    // No pid yet: its holder may be writing it right now; look again before calling it stale.
    if (!known && attempt === 0) await sleep(100);
    else await rm(lockFile, { force: true });
  }
  let released = false;
  return {
    dir: absolute,
    async release() {
      if (released) return;
      released = true;
      const holder = Number.parseInt(await readFile(lockFile, "utf8").catch(() => ""), 10);
      if (holder === process.pid) await rm(lockFile, { force: true });
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
