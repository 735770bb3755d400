/**
 * Where the CPU went during a measurement (Linux /proc): the server's share shows whether it
 * was the bottleneck (near 100% of its CPU) or the load generator was; the rest of the machine's
 * busy time (other processes) and hypervisor steal show how noisy the measurement was.
 */
import { readFileSync } from "node:fs";
import { progress } from "./process.js";

/** Linux reports process and machine times in USER_HZ ticks, 100 per second on every arch. */
export const TICKS_PER_SECOND = 100;

interface Sample {
  wallMs: number;
  busyTicks: number;
  stealTicks: number;
  serverTicks: number;
  harnessTicks: number;
}

/** How the CPU was shared during a measurement; shares in percent of one CPU. */
export interface CpuShare {
  server: number;
  /** CPU seconds the server used, all threads. */
  serverSeconds: number;
  /** Busy time of everything but the server and the harness. */
  others: number;
  /** Time the hypervisor gave to other machines. */
  steal: number;
}

function machineTicks(): { busy: number; steal: number } {
  const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  return { busy: user + nice + system + irq + softirq, steal };
}

/** CPU time a process has used (user + system, all threads), in ticks of 10 ms; throws once it is gone. */
export function processTicks(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(rest[11]) + Number(rest[12]);
}

/** `serverPids`: the processes counted as "the server" (the rest of the machine is "others"). */
function take(serverPids: readonly number[]): Sample | undefined {
  try {
    const machine = machineTicks();
    const harness = process.cpuUsage();
    return {
      wallMs: performance.now(),
      busyTicks: machine.busy,
      stealTicks: machine.steal,
      serverTicks: serverPids.reduce((sum, pid) => sum + processTicks(pid), 0),
      harnessTicks: ((harness.user + harness.system) / 1e6) * TICKS_PER_SECOND,
    };
  } catch {
    return undefined; // no /proc: the shares are simply not reported
  }
}

function shareBetween(before: Sample, after: Sample): CpuShare {
  const percentOfOneCpu = (ticks: number) => (100 * ticks) / (((after.wallMs - before.wallMs) / 1000) * TICKS_PER_SECOND);
  const server = after.serverTicks - before.serverTicks;
  const harness = after.harnessTicks - before.harnessTicks;
  return {
    server: percentOfOneCpu(server),
    serverSeconds: server / TICKS_PER_SECOND,
    others: percentOfOneCpu(Math.max(0, after.busyTicks - before.busyTicks - server - harness)),
    steal: percentOfOneCpu(after.stealTicks - before.stealTicks),
  };
}

/** Run `work`, and say how the CPU was shared meanwhile (undefined off Linux); `serverPids` count as the server. */
export async function withCpuShare<T>(serverPids: readonly number[], work: () => Promise<T>): Promise<[T, CpuShare | undefined]> {
  const before = take(serverPids);
  const result = await work();
  const after = take(serverPids);
  return [result, before && after ? shareBetween(before, after) : undefined];
}

/** Other processes using more than this share of a CPU make a measurement noisy. */
export const NOISY_OTHERS_PERCENT = 15;
const QUIET_PROBE_MS = 1000;

/**
 * Wait, at most `maxWaitSeconds` (0: not at all), until processes other than the harness and
 * `ownPids` use less than NOISY_OTHERS_PERCENT of a CPU over a one-second probe, saying so while
 * they do not.
 */
export async function waitForQuiet(ownPids: readonly number[], maxWaitSeconds: number): Promise<void> {
  if (maxWaitSeconds === 0) return;
  const giveUpAt = performance.now() + maxWaitSeconds * 1000;
  for (;;) {
    const before = take(ownPids);
    await new Promise((resolve) => setTimeout(resolve, QUIET_PROBE_MS));
    const after = take(ownPids);
    if (!before || !after) return;
    const { others } = shareBetween(before, after);
    if (others < NOISY_OTHERS_PERCENT || performance.now() >= giveUpAt) return;
    progress(`  waiting for a quieter machine: other processes use ${others.toFixed(0)}% of a CPU`);
  }
}
