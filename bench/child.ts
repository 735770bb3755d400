/**
 * Parent-process side of a benchmark server: start its entry in a child Node process
 * (on its own CPU when pinned), learn its port, stop it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync } from "node:fs";
import { compiledEntry } from "./build.js";
import type { ServerSpec } from "./servers/catalog.js";
import type { ReadyMessage } from "./servers/listen.js";

export interface RunningServer {
  baseUrl: string;
  pid: number;
  /** The child itself: its IPC channel answers bench/servers/memory-report.ts's questions. */
  process: ChildProcess;
  stop(): Promise<void>;
}

export interface ChildOptions {
  /** CPU to pin the child to. */
  cpu?: number;
  /** Node options before the entry (`--expose-gc`, `--import` of a preloaded module). */
  nodeArgs?: string[];
  /** Extra environment (merged over the spec's). */
  env?: Record<string, string>;
  /** Send the child's stdout to this file (created or emptied) instead of the harness's stdout. */
  stdoutFile?: string;
  /** A command that runs node (`valgrind --tool=callgrind`), instead of running it directly. */
  launcher?: string[];
  /** How long the child may take to listen (default 30 s). */
  startTimeoutMs?: number;
}

const START_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 10_000;

/** Runs the compiled entry (see build.ts: `compileServers` must have run). */
function nodeCommand(spec: ServerSpec, options: ChildOptions): [string, string[]] {
  const command = [...(options.launcher ?? []), process.execPath, ...(options.nodeArgs ?? []), compiledEntry(spec.entry)];
  if (options.cpu !== undefined) command.unshift("taskset", "-c", String(options.cpu));
  return [command[0]!, command.slice(1)];
}

export async function startServer(spec: ServerSpec, options: ChildOptions = {}): Promise<RunningServer> {
  const [command, args] = nodeCommand(spec, options);
  const stdout = options.stdoutFile === undefined ? "inherit" : openSync(options.stdoutFile, "w");
  const child = spawn(command, args, {
    // Production mode, as a deployed provider runs.
    env: { ...process.env, NODE_ENV: "production", ...spec.env, ...options.env },
    stdio: ["ignore", stdout, "pipe", "ipc"],
  });
  if (typeof stdout === "number") closeSync(stdout); // the child holds its own copy
  let stderrTail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    process.stderr.write(chunk);
    stderrTail = (stderrTail + chunk.toString()).slice(-4000);
  });

  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`Server "${spec.id}" did not start listening within ${startTimeoutMs / 1000} s.`));
    }, startTimeoutMs);
    child.once("message", (message: ReadyMessage) => {
      clearTimeout(timer);
      resolve(message.port);
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`Server "${spec.id}" exited before listening (code ${code}, signal ${signal}).\n${stderrTail}`));
    });
  });

  return { baseUrl: `http://127.0.0.1:${port}`, pid: child.pid ?? -1, process: child, stop: () => stopChild(child, spec.id) };
}

async function stopChild(child: ChildProcess, id: string): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) {
    throw new Error(`Server "${id}" died during the run (code ${child.exitCode}, signal ${child.signalCode}).`);
  }
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}
