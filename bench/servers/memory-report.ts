/**
 * Preloaded (`node --import`) into a benchmark server by bench/memory.ts: on `{ memory: "now" }`
 * over the IPC channel it answers with `process.memoryUsage()` and V8's heap spaces, in MiB; on
 * `{ memory: "after-gc" }` it first runs a full garbage collection (needs `--expose-gc`), so the
 * live heap shows apart from garbage not yet collected.
 */
import { getHeapSpaceStatistics } from "node:v8";

export interface MemoryReport {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** Size of each V8 heap space (new, old, code...), MiB. */
  spaces: Record<string, number>;
}

const mib = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;

process.on("message", (message: { memory?: "now" | "after-gc" }) => {
  if (message.memory === undefined) return;
  if (message.memory === "after-gc") (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  const spaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name.replace(/_space$/, ""), mib(space.space_size)]));
  const report: MemoryReport = {
    rss: mib(usage.rss),
    heapTotal: mib(usage.heapTotal),
    heapUsed: mib(usage.heapUsed),
    external: mib(usage.external),
    arrayBuffers: mib(usage.arrayBuffers),
    spaces,
  };
  process.send?.({ memoryReport: report });
});
