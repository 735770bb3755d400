/**
 * Benchmark settings, from command-line flags first, then BENCH_* environment variables,
 * then defaults. `npm run bench -- --quick` (or BENCH_DURATION=1) is the smoke run.
 */
import { parseArgs } from "node:util";

export interface Settings {
  /** Seconds measured per server and call, in total over the sweeps. */
  duration: number;
  /** Seconds of one measurement slice; a sweep measures every server for one slice. */
  slice: number;
  /** Seconds of load sent, and thrown away, to each server before its first slice of a call. */
  warmup: number;
  connections: number;
  /** Pin the harness and the servers to different CPUs with taskset (when there are two or more). */
  pin: boolean;
  /** Seconds to wait, before each sweep, for other processes to leave the CPUs alone; 0: never wait. */
  quietWait: number;
  /** Sweeps added, at most, to replace sweeps disturbed by other processes. */
  extraSweeps: number;
}

const USAGE = `Usage: npm run bench -- [options]

  --duration <s>       seconds measured per server and call, over all sweeps (BENCH_DURATION, default 10)
  --slice <s>          seconds per server per sweep; sweeps = duration / slice (BENCH_SLICE, default 1)
  --warmup <s>         seconds of discarded load per server and call          (BENCH_WARMUP, default 3)
  --connections <n>    concurrent connections, pipelining 1                   (BENCH_CONNECTIONS, default 20)
  --no-pin             do not pin harness and servers to separate CPUs        (BENCH_PIN=0)
  --quiet-wait <s>     before each sweep, wait up to <s> seconds for other processes
                       to use under 15% of a CPU                              (BENCH_QUIET_WAIT, default 20; 0: no wait)
  --extra-sweeps <n>   sweeps added, at most, to replace sweeps during which other
                       processes used over 15% of a CPU                       (BENCH_EXTRA_SWEEPS, default 10)
  --quick              smoke run: --duration 1 --warmup 0.5 --quiet-wait 0 --extra-sweeps 0
  --help`;

const options = {
  duration: { type: "string" },
  slice: { type: "string" },
  warmup: { type: "string" },
  connections: { type: "string" },
  "no-pin": { type: "boolean" },
  "quiet-wait": { type: "string" },
  "extra-sweeps": { type: "string" },
  quick: { type: "boolean" },
  help: { type: "boolean" },
} as const;

interface NumberRule {
  integer?: boolean;
  zeroAllowed?: boolean;
}

function numberSetting(name: string, raw: string | undefined, fallback: number, rule: NumberRule = {}): number {
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  const tooSmall = rule.zeroAllowed ? value < 0 : value <= 0;
  if (!Number.isFinite(value) || tooSmall || (rule.integer && !Number.isInteger(value))) {
    const expected = `${rule.zeroAllowed ? "a non-negative" : "a positive"} ${rule.integer ? "integer" : "number"}`;
    const envName = `BENCH_${name.toUpperCase().replaceAll("-", "_")}`;
    throw new Error(`--${name} (or ${envName}) must be ${expected}, got "${raw}".`);
  }
  return value;
}

/** Parsed settings, or `undefined` when only the usage was asked for (already printed). */
export function readSettings(argv: string[], env: NodeJS.ProcessEnv): Settings | undefined {
  const { values } = parseArgs({ args: argv, options, strict: true });
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const quick = values.quick === true || env.BENCH_QUICK === "1";
  const duration = numberSetting("duration", values.duration ?? env.BENCH_DURATION, quick ? 1 : 10);
  return {
    duration,
    slice: Math.min(duration, numberSetting("slice", values.slice ?? env.BENCH_SLICE, 1)),
    warmup: numberSetting("warmup", values.warmup ?? env.BENCH_WARMUP, quick ? 0.5 : 3, { zeroAllowed: true }),
    connections: numberSetting("connections", values.connections ?? env.BENCH_CONNECTIONS, 20, { integer: true }),
    pin: values["no-pin"] !== true && env.BENCH_PIN !== "0",
    quietWait: numberSetting("quiet-wait", values["quiet-wait"] ?? env.BENCH_QUIET_WAIT, quick ? 0 : 20, { zeroAllowed: true }),
    extraSweeps: numberSetting("extra-sweeps", values["extra-sweeps"] ?? env.BENCH_EXTRA_SWEEPS, quick ? 0 : 10, {
      integer: true,
      zeroAllowed: true,
    }),
  };
}

/** Sweeps planned: every server gets `duration` seconds per call, one slice per sweep. */
export function plannedSweeps(settings: Settings): number {
  return Math.max(1, Math.round(settings.duration / settings.slice));
}
