/**
 * Turn the measurements into the printed tables: server × call (median round), then the
 * provider's ratios to the reference servers with the targets and whether each is met.
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
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function summarize(rounds: Measured[]): Summary {
  const rates = rounds.map((m) => m.requestsPerSecond);
  const rate = median(rates);
  const cpuShares = rounds.flatMap((m) => (m.cpu ? [m.cpu.server] : []));
  return {
    requestsPerSecond: rate,
    p99Ms: median(rounds.map((m) => m.p99Ms)),
    spread: (Math.max(...rates) - Math.min(...rates)) / 2 / rate,
    serverCpu: cpuShares.length > 0 ? median(cpuShares) : undefined,
  };
}

/** Below this share of its CPU, a server was not the bottleneck of its own measurement. */
const SATURATED_CPU = 85;

/** How far the numbers can be trusted: unsaturated servers and a busy machine. */
function qualityNotes(servers: ServerSpec[], results: Results, summaries: Map<string, Map<CallName, Summary>>): string[] {
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
    const noisy = others > NOISY_OTHERS_PERCENT ? " (noisy: other processes competed for the CPUs; re-run on a quiet machine)" : "";
    notes.push(`- other processes used at most ${others.toFixed(0)}% of a CPU during a measurement, hypervisor steal at most ${steal.toFixed(0)}%${noisy}.`);
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

const percent = (ratio: number) => `${(ratio * 100).toFixed(0)}%`;
const row = (cells: string[]) => `| ${cells.join(" | ")} |`;

export interface Verdict {
  lines: string[];
  /** Targets checked and missed, e.g. "provider / express-bare bind-app 84% (target ≥ 90%)". */
  missed: string[];
}

export function formatReport(servers: ServerSpec[], results: Results, rounds: number): Verdict {
  const summaries = new Map<string, Map<CallName, Summary>>();
  for (const server of servers) {
    const perCall = new Map<CallName, Summary>();
    for (const call of CALL_NAMES) {
      const measured = results.get(server.id)?.get(call);
      if (measured?.length) perCall.set(call, summarize(measured));
    }
    summaries.set(server.id, perCall);
  }

  const spreadNote = rounds > 1 ? ` (median of ${rounds} rounds, ± half the spread)` : "";
  const lines = [
    `Requests per second and p99 latency${spreadNote}:`,
    "",
    row(["server", ...CALL_NAMES.flatMap((call) => [`${call} req/s`, `${call} p99 ms`])]),
    row(["---", ...CALL_NAMES.flatMap(() => ["---:", "---:"])]),
  ];
  for (const server of servers) {
    const cells = CALL_NAMES.flatMap((call) => {
      const summary = summaries.get(server.id)?.get(call);
      if (!summary) return ["-", "-"];
      const rate = Math.round(summary.requestsPerSecond).toString();
      return [rounds > 1 ? `${rate} ±${percent(summary.spread)}` : rate, summary.p99Ms.toFixed(1)];
    });
    lines.push(row([server.id, ...cells]));
  }

  const missed: string[] = [];
  const ratioRows: string[] = [];
  for (const provider of servers.filter((server) => server.role === "provider")) {
    for (const target of TARGETS) {
      const reference = servers.find((server) => server.role === target.reference);
      if (!reference) continue;
      const ratios = CALL_NAMES.map((call) => {
        const mine = summaries.get(provider.id)?.get(call);
        const theirs = summaries.get(reference.id)?.get(call);
        return mine && theirs ? mine.requestsPerSecond / theirs.requestsPerSecond : undefined;
      });
      const verdicts = CALL_NAMES.map((call, index) => {
        const ratio = ratios[index];
        if (target.atLeast === undefined || ratio === undefined) return undefined;
        const met = target.strictly ? ratio > target.atLeast : ratio >= target.atLeast;
        if (!met) missed.push(`${provider.id} / ${reference.id} ${call} ${percent(ratio)} (target ${target.label})`);
        return met;
      });
      const verdict = target.atLeast === undefined ? "-" : verdicts.every((met) => met !== false) ? "met" : "MISSED";
      ratioRows.push(
        row([`${provider.id} / ${reference.id}`, ...ratios.map((r) => (r === undefined ? "-" : percent(r))), target.label, verdict]),
      );
    }
  }
  if (ratioRows.length > 0) {
    lines.push("", "Provider req/s relative to each reference:", "");
    lines.push(row(["ratio", ...CALL_NAMES, "target", "verdict"]), row(["---", ...CALL_NAMES.map(() => "---:"), "---", "---"]));
    lines.push(...ratioRows);
  }
  lines.push("", "Measurement quality:", ...qualityNotes(servers, results, summaries));
  lines.push("", "Servers:", ...servers.map((server) => `- ${server.id}: ${server.description}`));
  return { lines, missed };
}
