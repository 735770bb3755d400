/**
 * One CPU for the server, another for the load generator: without pinning, the kernel moves
 * both around and the server's numbers swing with the harness's own work.
 */
import { execFileSync } from "node:child_process";
import { availableParallelism } from "node:os";

export interface CpuPlan {
  /** CPU the harness (autocannon) runs on; undefined when not pinned. */
  harness?: number;
  /** CPU every server child runs on; undefined when not pinned. */
  server?: number;
  /** What was done, for the report. */
  note: string;
}

function tasksetWorks(): boolean {
  try {
    execFileSync("taskset", ["-p", String(process.pid)], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** Pin this process (all its threads) to the harness CPU and say where servers go. */
export function pinCpus(wanted: boolean): CpuPlan {
  const cpus = availableParallelism();
  if (!wanted) return { note: `not pinned (--no-pin), ${cpus} CPUs` };
  if (cpus < 2) return { note: `not pinned: only ${cpus} CPU, harness and server share it` };
  if (!tasksetWorks()) return { note: `not pinned: taskset unavailable, ${cpus} CPUs shared` };
  execFileSync("taskset", ["-a", "-p", "-c", "0", String(process.pid)], { stdio: "ignore" });
  return { harness: 0, server: 1, note: "harness (autocannon) pinned to CPU 0, each server to CPU 1 (taskset)" };
}
