/**
 * The redis-servers a test run started, recorded so the run can prove none outlives it.
 *
 * test/server-records-setup.ts (every project's globalSetup) names a folder for the run in
 * `PROVIDER_KIT_TEST_SERVERS`; each server the tests start gets a file there until it is stopped.
 * At the end of the run, a recorded server still running is one a test never stopped: the
 * teardown kills it and fails the run, naming the test file that started it. Outside a test run
 * (the benches) the variable is unset and nothing is recorded.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { isAlive } from "@provider-kit/platform/redis-process";

export const RECORDS_VARIABLE = "PROVIDER_KIT_TEST_SERVERS";

export interface ServerRecord {
  pid: number;
  /** The process's start time (Linux `/proc/<pid>/stat`), so a reused pid is not taken for it. */
  startTime?: string;
  command: string;
  /** Its temporary folder (`provider-kit-redis-*`). */
  dir: string;
  /** The test file whose code started it, from the caller's stack. */
  startedBy: string;
}

function recordsDir(): string | undefined {
  return process.env[RECORDS_VARIABLE] || undefined;
}

/** /proc/<pid>/stat's state (field 3) and start time (field 22), read after the command name, which may hold spaces. */
function procStat(pid: number): { state: string; startTime: string } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { state: fields[0]!, startTime: fields[19]! };
  } catch {
    return undefined;
  }
}

/** Still running as the recorded process: not gone, not a zombie, not a new process under a reused pid. */
function running(record: ServerRecord): boolean {
  if (record.startTime === undefined) return isAlive(record.pid); // no /proc (macOS)
  const stat = procStat(record.pid);
  return stat !== undefined && stat.state !== "Z" && stat.startTime === record.startTime;
}

/** The test file on the stack `stack` was taken from: the first frame in a `*.test.ts`. */
export function testFileIn(stack: string | undefined): string {
  return /\(?((?:file:\/\/)?\/[^\s():]+\.test\.ts)/.exec(stack ?? "")?.[1] ?? "a file the stack does not name";
}

/** Notes a server as running; its `stop` calls `forget`. */
export function remember(record: Omit<ServerRecord, "startTime">): void {
  const dir = recordsDir();
  if (dir === undefined) return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${record.pid}.json`), JSON.stringify({ ...record, startTime: procStat(record.pid)?.startTime }));
}

export function forget(pid: number): void {
  const dir = recordsDir();
  if (dir !== undefined) rmSync(path.join(dir, `${pid}.json`), { force: true });
}

/** The servers recorded in `dir` and never stopped, running or not. */
export function unstopped(dir: string): ServerRecord[] {
  let files: string[];
  try {
    files = readdirSync(dir);
  } catch {
    return [];
  }
  return files.map((file) => JSON.parse(readFileSync(path.join(dir, file), "utf8")) as ServerRecord);
}

/** The recorded servers still running (the same process: same pid and start time). */
export function survivors(dir: string): ServerRecord[] {
  return unstopped(dir).filter(running);
}
