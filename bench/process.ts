/** What every harness needs of the processes it runs: their memory, its progress lines, and its own exit. */
import { readFileSync } from "node:fs";

/** Resident memory of a process, in MiB (Linux /proc); undefined elsewhere or once it is gone. */
export function rssMiB(pid: number | undefined): number | undefined {
  try {
    const kib = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kib === undefined ? undefined : Number(kib) / 1024;
  } catch {
    return undefined;
  }
}

/** A progress line on stderr (stdout holds the report). */
export function progress(message: string): void {
  process.stderr.write(`${message}\n`);
}

/** Runs a harness's `main`: exits with its code, or 1 with `<what> BROKEN: <why>`. */
export function runHarness(main: () => Promise<number>, what = "BENCHMARK RUN"): void {
  main().then(
    (code) => process.exit(code),
    (error: unknown) => {
      console.error(`\n${what} BROKEN: ${error instanceof Error ? error.message : String(error)}`);
      process.exit(1);
    },
  );
}
