/**
 * Provider replicas as real processes (fixtures/replica.ts run by node with the tsx loader),
 * for the tests of several replicas sharing one store.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { httpClient, type Served } from "./helpers.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/replica.ts", import.meta.url));

export interface Replica extends Served {
  process: ChildProcess;
}

/** Stops a process with `signal`; one that does not stop cleanly in time is killed. */
export function stopProcess(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill(signal);
  const force = setTimeout(() => child.kill("SIGKILL"), 10_000);
  return exited.finally(() => clearTimeout(force));
}

/**
 * Registers a hook that stops, after each test, every replica started (even one that never got
 * to listen); `start` runs one with the fixture's environment variables and waits for its port.
 */
export function useReplicaProcesses(): { start(name: string, env: Record<string, string>): Promise<Replica> } {
  let children: ChildProcess[] = [];
  afterEach(async () => {
    await Promise.all(children.map((child) => stopProcess(child, "SIGTERM")));
    children = [];
  });
  return {
    async start(name, env) {
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", FIXTURE], {
        env: { ...process.env, REPLICA: name, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      children.push(child);
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
      const port = await new Promise<number>((resolve, reject) => {
        child.once("exit", (code) => reject(new Error(`replica ${name} exited (${code}) before listening:\n${stderr}`)));
        createInterface({ input: child.stdout }).once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
      });
      return { ...httpClient(`http://127.0.0.1:${port}`), process: child };
    },
  };
}
