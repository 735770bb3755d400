/**
 * Child processes for the template tests: one-shot commands with their output, and a
 * long-running server that is waited on by polling its output and stopped as a process group.
 */
import { spawn, type ChildProcess } from "node:child_process";

export interface Finished {
  command: string;
  code: number | null;
  stdout: string;
  stderr: string;
}

interface SpawnOptions {
  cwd: string;
  /** Added to the cleaned environment. */
  env?: Record<string, string>;
  /** Killed after this long. Default 280 s (under the slow tests' 300 s limit). */
  timeoutMs?: number;
}

/**
 * The environment of this test run, less what would leak into a child: vitest's own variables
 * (a nested vitest would think it is a worker), forced colours (output is matched as text) and
 * any PROVIDER_* settings of the developer.
 */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(
      ([key]) => !/^(VITEST|PROVIDER_|FORCE_COLOR$|NODE_OPTIONS$|NODE_ENV$|TEST$)/.test(key),
    ),
  );
  return { ...env, NO_COLOR: "1", ...extra };
}

function collect(child: ChildProcess): { stdout: () => string; stderr: () => string } {
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return { stdout: () => stdout, stderr: () => stderr };
}

export function run(command: string, args: string[], options: SpawnOptions): Promise<Finished> {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: childEnv(options.env),
    stdio: ["ignore", "pipe", "pipe"],
    timeout: options.timeoutMs ?? 280_000,
  });
  const output = collect(child);
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("close", (code) =>
      resolve({ command: [command, ...args].join(" "), code, stdout: output.stdout(), stderr: output.stderr() }),
    );
  });
}

export interface LongRunning {
  /** The process started (for its memory use: /proc/<pid>/status). */
  readonly pid: number | undefined;
  /** Resolves with the first output line matching `pattern`; throws if the process exits or time runs out first. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<string>;
  /**
   * The loopback URL in the first line matching `pattern`: how a server started on port 0 says
   * where it listens. (A port picked free beforehand can be taken by another process before the
   * server binds it.)
   */
  waitForUrl(pattern: RegExp, timeoutMs: number): Promise<string>;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** A signal to the process started alone (npm, a shell), not to what it started. */
  signal(signal: NodeJS.Signals): void;
  /** A signal to its whole process group, as a terminal's Ctrl-C sends SIGINT. */
  signalGroup(signal: NodeJS.Signals): void;
  /** true while any process of its group (npm, the shell, tsx, node) is left. */
  groupAlive(): boolean;
  /** SIGTERM to its whole process group (npm, the shell, tsx, node), then wait for it to end. */
  stop(): Promise<void>;
}

const POLL_MS = 100;

/** true while any process of the group `pgid` is left. */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function startLongRunning(command: string, args: string[], options: SpawnOptions): LongRunning {
  // Its own process group, so stop() reaches the grandchildren npm starts.
  const child = spawn(command, args, { cwd: options.cwd, env: childEnv(options.env), detached: true });
  const output = collect(child);
  const all = () => output.stdout() + output.stderr();
  let exited = false;
  const closed = new Promise<void>((resolve) =>
    child.once("close", () => {
      exited = true;
      resolve();
    }),
  );
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // The group is already gone.
    }
  };

  const waitForLine = async (pattern: RegExp, timeoutMs: number) => {
    for (const started = Date.now(); Date.now() - started < timeoutMs; await sleep(POLL_MS)) {
        const line = all()
          .split("\n")
          .find((candidate) => pattern.test(candidate));
        if (line !== undefined) return line;
        if (exited) break;
      }
      throw new Error(`${command} ${args.join(" ")}: no line matching ${pattern} (exited: ${exited}). Output:\n${all()}`);
  };

  return {
    pid: child.pid,
    waitForLine,
    async waitForUrl(pattern, timeoutMs) {
      const line = await waitForLine(pattern, timeoutMs);
      const url = /http:\/\/127\.0\.0\.1:\d+/.exec(line)?.[0];
      if (url === undefined) throw new Error(`${command} ${args.join(" ")}: no loopback URL in its line: ${line}`);
      return url;
    },
    output: all,
    signal: (signal) => child.kill(signal),
    signalGroup,
    groupAlive: () => processGroupAlive(child.pid!),
    async stop() {
      signalGroup("SIGTERM");
      const forced = setTimeout(() => signalGroup("SIGKILL"), 30_000);
      await closed;
      clearTimeout(forced);
    },
  };
}
