/** Machine and run facts printed above the results, so a pasted table says where it came from. */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { plannedSweeps, type Settings } from "./settings.js";

function cpuModel(): string {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((l) => l.startsWith("model name"));
    return line?.split(":")[1]?.trim() ?? "unknown";
  } catch {
    return "unknown (no /proc/cpuinfo)";
  }
}

/** The commit measured, and whether the framework's sources differed from it (work in progress). */
function sourceVersion(): string {
  try {
    const git = (...args: string[]) => execFileSync("git", args, { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
    const dirty = git("status", "--porcelain", "--", "src") !== "" ? " + uncommitted changes in src/" : "";
    return `${git("rev-parse", "--short", "HEAD")}${dirty}`;
  } catch {
    return "unknown (not a git checkout)";
  }
}

/** The date, the machine and the commit measured. */
export function machineFacts(): string[] {
  return [
    `date: ${new Date().toISOString()}`,
    `machine: ${cpus().length} CPUs (${cpuModel()}), node ${process.version}, ${process.platform}/${process.arch}`,
    `source: ${sourceVersion()}`,
  ];
}

export function describeRun(settings: Settings, pinning: string): string[] {
  const [date, machine, source] = machineFacts();
  return [
    date!,
    machine!,
    `settings: per server and call ${settings.warmup} s warm-up, then ${plannedSweeps(settings)} interleaved sweeps of ` +
      `${settings.slice} s (${settings.duration} s measured); ${settings.connections} connections, pipelining 1, keep-alive`,
    `cpus: ${pinning}`,
    source!,
  ];
}
