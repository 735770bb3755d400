/**
 * Turn the measurements into the printed tables: server × call (median round), then the
 * provider's ratios to the reference servers with the targets and whether each is met.
 * Besides req/s, each cell shows the server's CPU time per request: on a machine where other
 * processes compete for the CPUs, that number moves much less than req/s does.
 */
import { CALL_NAMES, type CallName } from "./calls.js";
import { NOISY_OTHERS_PERCENT, type CpuShare } from "./cpu-share.js";
import type { Measurement } from "./load.js";
import type { ServerRole, ServerSpec } from "./servers/catalog.js";

/** One measurement and how the CPU was shared during it. */
export type Measured = Measurement & { cpu?: CpuShare };

/** Every round's measurement, per server id and call. */
export type Results = Map<string, Map<CallName, Measured[]>>;

export function record(results: Results, serverId: string, call: CallName, measurement: Measured): void {
  const perCall = results.get(serverId) ?? new Map<CallName, Measured[]>();
  results.set(serverId, perCall);
  perCall.set(call, [...(perCall.get(call) ?? []), measurement]);
}

interface Summary {
  requestsPerSecond: number;
  p99Ms: number;
  /** Half the spread of req/s across rounds, relative to the median. */
  spread: number;
  /** Median share of one CPU the server used; undefined off Linux. */
  serverCpu?: number;
  /** Median server CPU time per request, in microseconds; undefined off Linux. */
  cpuMicrosPerRequest?: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

const medianOrUndefined = (values: number[]) => (values.length > 0 ? median(values) : undefined);

function summarize(rounds: Measured[]): Summary {
  const rates = rounds.map((m) => m.requestsPerSecond);
  const rate = median(rates);
  const withCpu = rounds.flatMap((m) => (m.cpu ? [{ cpu: m.cpu, requests: m.requests }] : []));
  return {
    requestsPerSecond: rate,
    p99Ms: median(rounds.map((m) => m.p99Ms)),
    spread: (Math.max(...rates) - Math.min(...rates)) / 2 / rate,
    serverCpu: medianOrUndefined(withCpu.map(({ cpu }) => cpu.server)),
    cpuMicrosPerRequest: medianOrUndefined(withCpu.map(({ cpu, requests }) => (cpu.serverSeconds * 1e6) / requests)),
  };
}

/** Below this share of its CPU, a server was not the bottleneck of its own measurement. */
const SATURATED_CPU = 85;

/** How far the numbers can be trusted: unsaturated servers and a busy machine. */
function qualityNotes(servers: ServerSpec[], results: Results, summaries: Summaries): string[] {
  const notes: string[] = [];
  for (const server of servers) {
    for (const call of CALL_NAMES) {
      const cpu = summaries.get(server.id)?.get(call)?.serverCpu;
      if (cpu !== undefined && cpu < SATURATED_CPU) {
        notes.push(
          `- ${server.id} ${call}: the server used only ${cpu.toFixed(0)}% of its CPU: the load generator ` +
            "(or other processes on its CPU) was the limit, so its req/s is a lower bound.",
        );
      }
    }
  }
  const shares = [...results.values()].flatMap((perCall) => [...perCall.values()].flat()).flatMap((m) => (m.cpu ? [m.cpu] : []));
  if (shares.length > 0) {
    const others = Math.max(...shares.map((share) => share.others));
    const steal = Math.max(...shares.map((share) => share.steal));
    const noisy = others > NOISY_OTHERS_PERCENT ? " (noisy: other processes competed for the CPUs; trust the CPU/request ratios more than req/s, or re-run on a quiet machine)" : "";
    notes.push(`- other processes used at most ${others.toFixed(0)}% of a CPU during a measurement, hypervisor steal at most ${steal.toFixed(0)}%${noisy}.`);
  } else {
    notes.push("- no CPU accounting (needs Linux /proc).");
  }
  return notes;
}

interface Target {
  reference: ServerRole;
  label: string;
  /** Ratio the provider must reach; undefined: shown for context only. */
  atLeast?: number;
  strictly?: boolean;
}

const TARGETS: Target[] = [
  { reference: "express-bare", label: "≥ 90%", atLeast: 0.9 },
  { reference: "express-handwritten", label: "> 100%", atLeast: 1, strictly: true },
  { reference: "node-http", label: "context" },
];

type Summaries = Map<string, Map<CallName, Summary>>;

const percent = (ratio: number | undefined) => (ratio === undefined ? "-" : `${(ratio * 100).toFixed(0)}%`);
const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

function resultTable(servers: ServerSpec[], summaries: Summaries, rounds: number): string[] {
  const spreadNote = rounds > 1 ? ` Median of ${rounds} rounds; ± is half the spread of req/s across rounds.` : "";
  const lines = [
    `Requests per second, p99 latency, and server CPU time per request.${spreadNote}`,
    "",
    row(["server", ...CALL_NAMES.flatMap((call) => [`${call} req/s`, `${call} p99 ms`, `${call} CPU µs/req`])]),
    row(["---", ...CALL_NAMES.flatMap(() => ["---:", "---:", "---:"])]),
  ];
  for (const server of servers) {
    const cells = CALL_NAMES.flatMap((call) => {
      const summary = summaries.get(server.id)?.get(call);
      if (!summary) return ["-", "-", "-"];
      const rate = Math.round(summary.requestsPerSecond).toString();
      return [
        rounds > 1 ? `${rate} ±${percent(summary.spread)}` : rate,
        summary.p99Ms.toFixed(1),
        summary.cpuMicrosPerRequest === undefined ? "-" : summary.cpuMicrosPerRequest.toFixed(0),
      ];
    });
    lines.push(row([server.id, ...cells]));
  }
  return lines;
}

export interface Verdict {
  lines: string[];
  /** Targets checked and missed, e.g. "provider / express-bare bind-app 84% (target ≥ 90%)". */
  missed: string[];
}

/** Provider relative to each reference: req/s ratio (the target) and CPU-efficiency ratio (the cross-check). */
function ratioTable(servers: ServerSpec[], summaries: Summaries): Verdict {
  const missed: string[] = [];
  const rows: string[] = [];
  for (const provider of servers.filter((server) => server.role === "provider")) {
    for (const target of TARGETS) {
      const reference = servers.find((server) => server.role === target.reference);
      if (!reference) continue;
      const pairs = CALL_NAMES.map((call) => [summaries.get(provider.id)?.get(call), summaries.get(reference.id)?.get(call)] as const);
      const rateRatios = pairs.map(([mine, theirs]) => (mine && theirs ? mine.requestsPerSecond / theirs.requestsPerSecond : undefined));
      const cpuRatios = pairs.map(([mine, theirs]) =>
        mine?.cpuMicrosPerRequest && theirs?.cpuMicrosPerRequest ? theirs.cpuMicrosPerRequest / mine.cpuMicrosPerRequest : undefined,
      );
      let verdict = "-";
      if (target.atLeast !== undefined) {
        const misses = CALL_NAMES.filter((_, index) => {
          const ratio = rateRatios[index];
          if (ratio === undefined) return false;
          return target.strictly ? ratio <= target.atLeast! : ratio < target.atLeast!;
        });
        for (const call of misses) {
          missed.push(`${provider.id} / ${reference.id} ${call} ${percent(rateRatios[CALL_NAMES.indexOf(call)])} (target ${target.label})`);
        }
        verdict = misses.length === 0 ? "met" : "MISSED";
      }
      rows.push(row([`${provider.id} / ${reference.id}`, ...rateRatios.map(percent), ...cpuRatios.map(percent), target.label, verdict]));
    }
  }
  if (rows.length === 0) return { lines: [], missed };
  return {
    lines: [
      "",
      "Provider relative to each reference: req/s ratio (the target applies to it) and CPU-efficiency ratio",
      "(reference CPU per request ÷ provider CPU per request; the same comparison, robust to a busy machine):",
      "",
      row(["ratio", ...CALL_NAMES.map((call) => `${call} req/s`), ...CALL_NAMES.map((call) => `${call} CPU`), "target (req/s)", "verdict"]),
      row(["---", ...CALL_NAMES.flatMap(() => ["---:", "---:"]), "---", "---"]),
      ...rows,
    ],
    missed,
  };
}

export function formatReport(servers: ServerSpec[], results: Results, rounds: number): Verdict {
  const summaries: Summaries = new Map();
  for (const server of servers) {
    const perCall = new Map<CallName, Summary>();
    for (const call of CALL_NAMES) {
      const measured = results.get(server.id)?.get(call);
      if (measured?.length) perCall.set(call, summarize(measured));
    }
    summaries.set(server.id, perCall);
  }
  const ratios = ratioTable(servers, summaries);
  const lines = [
    ...resultTable(servers, summaries, rounds),
    ...ratios.lines,
    "",
    "Measurement quality:",
    ...qualityNotes(servers, results, summaries),
    "",
    "Servers:",
    ...servers.map((server) => `- ${server.id}: ${server.description}`),
  ];
  return { lines, missed: ratios.missed };
}
