/**
 * Turn the sweeps into the printed tables: server × call, then the provider's ratios to the
 * reference servers with the targets and whether each is met.
 *
 * A ratio is taken inside each sweep (the provider and the reference measured seconds apart,
 * under the same machine conditions), then the median over sweeps is reported. Besides req/s,
 * each cell shows the server's CPU time per request, the cost of one call however fast the load
 * generator asks.
 */
import type { CallName } from "./calls.js";
import { NOISY_OTHERS_PERCENT, type CpuShare } from "./cpu-share.js";
import type { Measurement } from "./load.js";
import type { ServerSpec } from "./servers/catalog.js";
import { median, quantile, row } from "./tables.js";

/** One slice of one server and how the CPU was shared during it. */
export type Measured = Measurement & { cpu?: CpuShare };

/** Every server measured for one slice, back to back. */
export interface Sweep {
  measured: Map<string, Measured>;
  /** Other processes competed for the CPUs during at least one slice. */
  noisy: boolean;
}

export type Results = Map<CallName, Sweep[]>;

/** Which sweeps the numbers come from: the clean ones, unless too few were clean. */
export function usableSweeps(sweeps: Sweep[], planned: number): { sweeps: Sweep[]; clean: boolean } {
  const clean = sweeps.filter((sweep) => !sweep.noisy);
  return clean.length >= Math.ceil(planned / 2) ? { sweeps: clean, clean: true } : { sweeps, clean: false };
}

const medianOrUndefined = (values: number[]) => (values.length > 0 ? median(values) : undefined);

const cpuMicrosPerRequest = (m: Measured) => (m.cpu && m.requests > 0 ? (m.cpu.serverSeconds * 1e6) / m.requests : undefined);
const defined = <T>(values: (T | undefined)[]) => values.filter((value): value is T => value !== undefined);

interface Summary {
  requestsPerSecond: number;
  /** Half the interquartile range of req/s across sweeps, relative to the median. */
  spread: number;
  p99Ms: number;
  cpuMicrosPerRequest?: number;
  /** Median share of one CPU the server used. */
  serverCpu?: number;
}

function summarize(slices: Measured[]): Summary {
  const rates = slices.map((m) => m.requestsPerSecond);
  const rate = median(rates);
  return {
    requestsPerSecond: rate,
    spread: (quantile(rates, 0.75) - quantile(rates, 0.25)) / 2 / rate,
    p99Ms: median(slices.map((m) => m.p99Ms)),
    cpuMicrosPerRequest: medianOrUndefined(defined(slices.map(cpuMicrosPerRequest))),
    serverCpu: medianOrUndefined(defined(slices.map((m) => m.cpu?.server))),
  };
}

/** One server relative to another, by id; with `atLeast`, a target on req/s per call, else context. */
interface Ratio {
  server: string;
  reference: string;
  label: string;
  atLeast?: Partial<Record<CallName, number>>;
}

/**
 * The peer targets are checked on the `provider-registry` row: the framework with everything on
 * and a MemoryStore registry, against the hand-written peer with its Map (issue 43).
 */
const TARGET_SERVER = "provider-registry";
/** The hand-written Express provider with the same features: the provider must keep up with it. */
const PEER_SERVER = "express-handwritten";
const RATIOS: Ratio[] = [
  { server: TARGET_SERVER, reference: PEER_SERVER, label: "≥ 100%", atLeast: { status: 1, "bind-app": 1 } },
  { server: "provider", reference: PEER_SERVER, label: "context" },
  { server: "provider", reference: "express-bare", label: "context" },
  { server: "provider", reference: "node-http", label: "context" },
  // The registry's cost (issue 15, section 2).
  { server: "provider-registry", reference: "provider", label: "status ≥ 90%, bind-app ≥ 80%", atLeast: { status: 0.9, "bind-app": 0.8 } },
  // No bind-app target: every write is fenced by the lock and the lock is no longer handed over (issue 22).
  { server: "provider-redis-store", reference: "provider-registry", label: "status ≥ 60%", atLeast: { status: 0.6 } },
];

/** The provider's p99 latency may be at most this multiple of the peer's, same run. */
const P99_OVER_PEER = 1.5;

/** Below this share of its CPU, a server was not the bottleneck of its own measurement. */
const SATURATED_CPU = 85;

const percent = (ratio: number | undefined) => (ratio === undefined ? "-" : `${(ratio * 100).toFixed(0)}%`);

/** Median over sweeps of a per-sweep ratio between two servers. */
function sweepRatio(sweeps: Sweep[], ratio: (mine: Measured, theirs: Measured) => number | undefined, mineId: string, theirsId: string) {
  return medianOrUndefined(
    defined(
      sweeps.map((sweep) => {
        const mine = sweep.measured.get(mineId);
        const theirs = sweep.measured.get(theirsId);
        return mine && theirs ? ratio(mine, theirs) : undefined;
      }),
    ),
  );
}

export interface Verdict {
  lines: string[];
  /** Too few undisturbed sweeps for some call: the verdicts are not to be trusted. */
  noisy: boolean;
  /** Targets checked and missed, e.g. "provider / express-bare bind-app 84% (target ≥ 90%)". */
  missed: string[];
}

export function formatReport(servers: readonly ServerSpec[], results: Results, planned: number): Verdict {
  const calls = [...results.keys()];
  const used = new Map(calls.map((call) => [call, usableSweeps(results.get(call) ?? [], planned)] as const));
  const summary = (serverId: string, call: CallName) => {
    const slices = defined((used.get(call)?.sweeps ?? []).map((sweep) => sweep.measured.get(serverId)));
    return slices.length > 0 ? summarize(slices) : undefined;
  };

  const lines = [
    "Requests per second, p99 latency and server CPU time per request: median over sweeps (± is half the interquartile range of req/s).",
    "",
    row(["server", ...calls.flatMap((call) => [`${call} req/s`, `${call} p99 ms`, `${call} CPU µs/req`])]),
    row(["---", ...calls.flatMap(() => ["---:", "---:", "---:"])]),
  ];
  for (const server of servers) {
    const cells = calls.flatMap((call) => {
      const s = summary(server.id, call);
      if (!s) return ["-", "-", "-"];
      return [
        `${Math.round(s.requestsPerSecond)} ±${percent(s.spread)}`,
        s.p99Ms.toFixed(1),
        s.cpuMicrosPerRequest === undefined ? "-" : s.cpuMicrosPerRequest.toFixed(0),
      ];
    });
    lines.push(row([server.id, ...cells]));
  }

  const missed: string[] = [];
  const ratioRows: string[] = [];
  /** One ratio row; with `atLeast`, a verdict too, its misses recorded. */
  const ratioRow = (mine: ServerSpec, reference: ServerSpec, label: string, atLeast?: Partial<Record<CallName, number>>) => {
    const rateRatios = calls.map((call) =>
      sweepRatio(used.get(call)!.sweeps, (m, theirs) => m.requestsPerSecond / theirs.requestsPerSecond, mine.id, reference.id),
    );
    const cpuRatios = calls.map((call) =>
      sweepRatio(
        used.get(call)!.sweeps,
        (m, theirs) => {
          const [own, other] = [cpuMicrosPerRequest(m), cpuMicrosPerRequest(theirs)];
          return own && other ? other / own : undefined;
        },
        mine.id,
        reference.id,
      ),
    );
    let verdict = "-";
    if (atLeast !== undefined) {
      const misses = calls.filter((call, index) => {
        const ratio = rateRatios[index];
        const wanted = atLeast[call];
        return ratio !== undefined && wanted !== undefined && ratio < wanted;
      });
      for (const call of misses) missed.push(`${mine.id} / ${reference.id} ${call}: ${percent(rateRatios[calls.indexOf(call)])} (target ${label})`);
      verdict = misses.length === 0 ? "met" : "MISSED";
    }
    ratioRows.push(row([`${mine.id} / ${reference.id}`, ...rateRatios.map(percent), ...cpuRatios.map(percent), label, verdict]));
  };
  for (const ratio of RATIOS) {
    const [mine, reference] = [ratio.server, ratio.reference].map((id) => servers.find((server) => server.id === id));
    if (mine && reference) ratioRow(mine, reference, ratio.label, ratio.atLeast);
  }
  for (const call of calls) {
    const [p99, peerP99] = [TARGET_SERVER, PEER_SERVER].map((id) => summary(id, call)?.p99Ms);
    if (p99 !== undefined && peerP99 !== undefined && p99 > P99_OVER_PEER * peerP99) {
      missed.push(`${TARGET_SERVER} ${call} p99: ${p99.toFixed(1)} ms, ${PEER_SERVER}'s ${peerP99.toFixed(1)} ms (target ≤ ${P99_OVER_PEER}×)`);
    }
  }
  if (ratioRows.length > 0) {
    lines.push(
      "",
      "Each server relative to a reference, median of the per-sweep ratios: req/s (the targets apply to it),",
      "and CPU efficiency (reference CPU per request ÷ the server's CPU per request):",
      "",
      row(["ratio", ...calls.map((call) => `${call} req/s`), ...calls.map((call) => `${call} CPU`), "target (req/s)", "verdict"]),
      row(["---", ...calls.flatMap(() => ["---:", "---:"]), "---", "---"]),
      ...ratioRows,
    );
  }

  lines.push("", "Measurement quality:");
  for (const call of calls) {
    const all = results.get(call) ?? [];
    const { sweeps, clean } = used.get(call)!;
    const cleanCount = all.filter((sweep) => !sweep.noisy).length;
    lines.push(
      clean
        ? `- ${call}: ${sweeps.length} clean sweeps used (${all.length - cleanCount} disturbed by other processes, set aside).`
        : `- ${call}: NOISY: only ${cleanCount} of ${all.length} sweeps ran with other processes under ${NOISY_OTHERS_PERCENT}% of a CPU; ` +
            "all sweeps used. Re-run on a quieter machine before trusting these numbers.",
    );
    const unsaturated = defined(
      servers.map((server) => {
        const cpu = summary(server.id, call)?.serverCpu;
        return cpu !== undefined && cpu < SATURATED_CPU ? `${server.id} ${cpu.toFixed(0)}%` : undefined;
      }),
    );
    if (unsaturated.length > 0) {
      lines.push(
        `- ${call}: servers that used under ${SATURATED_CPU}% of their CPU (the load generator, or other processes ` +
          `on that CPU, was the limit: their req/s is a lower bound): ${unsaturated.join(", ")}.`,
      );
    }
  }
  const shares = [...used.values()].flatMap(({ sweeps }) => sweeps.flatMap((sweep) => defined([...sweep.measured.values()].map((m) => m.cpu))));
  if (shares.length > 0) {
    lines.push(
      `- in the sweeps used, other processes took at most ${Math.max(...shares.map((s) => s.others)).toFixed(0)}% of a CPU, ` +
        `hypervisor steal at most ${Math.max(...shares.map((s) => s.steal)).toFixed(0)}%.`,
    );
  } else {
    lines.push("- no CPU accounting (needs Linux /proc): noise could not be checked.");
  }
  lines.push("", "Servers:", ...servers.map((server) => `- ${server.id}: ${server.description}`));
  const noisy = [...used.values()].some((use) => !use.clean);
  return { lines, missed, noisy };
}
