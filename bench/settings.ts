/**
 * Benchmark settings, from command-line flags first, then BENCH_* environment variables,
 * then defaults. `npm run bench -- --quick` (or BENCH_DURATION=1) is the smoke run.
 */
import { parseArgs } from "node:util";

export interface Settings {
  /** Seconds measured per server and call, per round. */
  duration: number;
  /** Seconds of load sent, and thrown away, before each measurement. */
  warmup: number;
  connections: number;
  /** Every server is measured this many times, interleaved; the median round is reported. */
  rounds: number;
  /** Server ids to run, in order (see servers/catalog.ts). */
  servers: string[] | undefined;
  /** Directory for `node --cpu-prof` profiles of the server children; absent: no profiling. */
  profileDir: string | undefined;
  /** Pin the harness and the servers to different CPUs with taskset (when there are two or more). */
  pin: boolean;
  /** Seconds to wait, before each measurement, for other processes to leave the CPUs alone; 0: never wait. */
  quietWait: number;
  /** Times a measurement is repeated when other processes competed for the CPUs during it. */
  noisyRetries: number;
}

const USAGE = `Usage: npm run bench -- [options]

  --duration <s>         seconds measured per server and call, per round    (BENCH_DURATION, default 5)
  --warmup <s>           seconds of discarded load before each measurement  (BENCH_WARMUP, default 2, at most --duration)
  --connections <n>      concurrent connections, pipelining 1               (BENCH_CONNECTIONS, default 20)
  --rounds <n>           interleaved rounds; the median round is reported   (BENCH_ROUNDS, default 3)
  --servers <ids>        comma-separated server ids, see bench/servers/catalog.ts
                                                                            (BENCH_SERVERS, default: the five main servers)
  --profile <dir>        write CPU profiles of each server child into <dir> (BENCH_PROFILE)
  --no-pin               do not pin harness and servers to separate CPUs    (BENCH_PIN=0)
  --quiet-wait <s>       before each measurement, wait up to <s> seconds for other
                         processes to use under 15% of a CPU                (BENCH_QUIET_WAIT, default 60; 0: no wait)
  --noisy-retries <n>    measure again, up to <n> times, when other processes
                         used over 15% of a CPU during a measurement        (BENCH_NOISY_RETRIES, default 2)
  --quick                smoke run: --duration 1 --warmup 0.5 --rounds 1 --quiet-wait 0 --noisy-retries 0
  --help`;

const options = {
  duration: { type: "string" },
  warmup: { type: "string" },
  connections: { type: "string" },
  rounds: { type: "string" },
  servers: { type: "string" },
  profile: { type: "string" },
  "no-pin": { type: "boolean" },
  "quiet-wait": { type: "string" },
  "noisy-retries": { type: "string" },
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
  const duration = numberSetting("duration", values.duration ?? env.BENCH_DURATION, quick ? 1 : 5);
  const warmup = Math.min(duration, numberSetting("warmup", values.warmup ?? env.BENCH_WARMUP, quick ? 0.5 : 2, { zeroAllowed: true }));
  const serverList = values.servers ?? env.BENCH_SERVERS;
  return {
    duration,
    warmup,
    connections: numberSetting("connections", values.connections ?? env.BENCH_CONNECTIONS, 20, { integer: true }),
    rounds: numberSetting("rounds", values.rounds ?? env.BENCH_ROUNDS, quick ? 1 : 3, { integer: true }),
    servers: serverList ? serverList.split(",").map((id) => id.trim()).filter(Boolean) : undefined,
    profileDir: values.profile ?? (env.BENCH_PROFILE || undefined),
    pin: values["no-pin"] !== true && env.BENCH_PIN !== "0",
    noisyRetries: numberSetting("noisy-retries", values["noisy-retries"] ?? env.BENCH_NOISY_RETRIES, quick ? 0 : 2, {
      integer: true,
      zeroAllowed: true,
    }),
    quietWait: numberSetting("quiet-wait", values["quiet-wait"] ?? env.BENCH_QUIET_WAIT, quick ? 0 : 60, { zeroAllowed: true }),
  };
}
