/**
 * `npm run bench`: requests per second and p99 latency of the status and bind-app calls on the
 * provider and three reference servers, each server in its own child process, side by side in
 * one run. Exits non-zero only when the run is broken (a wrong answer, a non-2xx, an error);
 * missed speed targets are reported, not failed.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CALLS, CALL_NAMES, type CallName } from "./calls.js";
import { startServer } from "./child.js";
import { NOISY_OTHERS_PERCENT, waitForQuiet, withCpuShare } from "./cpu-share.js";
import { pinCpus, type CpuPlan } from "./cpus.js";
import { describeRun } from "./facts.js";
import { brokenBecause, load, type Measurement } from "./load.js";
import { formatReport, record, type Measured, type Results } from "./report.js";
import { selectServers, type ServerSpec } from "./servers/catalog.js";
import { readSettings, type Settings } from "./settings.js";
import { verifyAnswer } from "./verify.js";

/** What the provider's logger wrote, to show logging really ran and what it cost in bytes. */
interface LogTally {
  bytes: number;
  lines: number;
  requests: number;
}

const progress = (message: string) => process.stderr.write(`${message}\n`);

interface Cell {
  server: ServerSpec;
  call: CallName;
  round: number;
  baseUrl: string;
  pid: number;
}

async function loadOrFail(cell: Cell, seconds: number, settings: Settings, phase: string): Promise<Measurement> {
  const measurement = await load(cell.baseUrl, CALLS[cell.call], seconds, settings.connections);
  const broken = brokenBecause(measurement);
  if (broken) throw new Error(`Server "${cell.server.id}", ${cell.call}, ${phase}: ${broken}.`);
  return measurement;
}

function describe(cell: Cell, settings: Settings, measured: Measured): string {
  const { cpu } = measured;
  const cpuNote = cpu ? `  cpu: server ${cpu.server.toFixed(0)}%, others ${cpu.others.toFixed(0)}%, steal ${cpu.steal.toFixed(0)}%` : "";
  return (
    `round ${cell.round}/${settings.rounds}  ${cell.server.id.padEnd(20)} ${cell.call.padEnd(9)} ` +
    `${Math.round(measured.requestsPerSecond).toString().padStart(6)} req/s  p99 ${measured.p99Ms.toFixed(1).padStart(5)} ms${cpuNote}`
  );
}

/**
 * Warm up, then measure one server × call. On a shared machine, wait for other processes to
 * calm down first, and measure again when they competed anyway (the last attempt is kept).
 * Resolves with the measurement and the number of requests the server answered.
 */
async function measureCell(cell: Cell, settings: Settings): Promise<[Measured, number]> {
  let requests = 0;
  for (let attempt = 0; ; attempt++) {
    if (settings.quietWait > 0) {
      await waitForQuiet(cell.pid, settings.quietWait, (others) =>
        progress(`waiting for a quieter machine: other processes use ${others.toFixed(0)}% of a CPU`),
      );
    }
    if (settings.warmup > 0) requests += (await loadOrFail(cell, settings.warmup, settings, "warm-up")).requests;
    const [measurement, cpu] = await withCpuShare(cell.pid, () => loadOrFail(cell, settings.duration, settings, "measurement"));
    const measured: Measured = { ...measurement, cpu };
    requests += measurement.requests;
    progress(describe(cell, settings, measured));
    const noisy = cpu !== undefined && cpu.others > NOISY_OTHERS_PERCENT;
    if (!noisy || attempt >= settings.noisyRetries) return [measured, requests];
    progress(`  other processes competed for the CPUs; measuring again (${attempt + 1}/${settings.noisyRetries})`);
  }
}

async function benchServer(server: ServerSpec, round: number, settings: Settings, cpus: CpuPlan, results: Results, logs: Map<string, LogTally>): Promise<void> {
  // Only the provider logs; its log goes to a real file, as in production.
  const logFile = server.role === "provider" ? join(tmpdir(), `provider-kit-bench-${process.pid}-${server.id}.log`) : undefined;
  const running = await startServer(server, {
    cpu: cpus.server,
    profileDir: settings.profileDir && join(settings.profileDir, `${server.id}-round${round}`),
    env: logFile ? { BENCH_LOG_FILE: logFile } : {},
  });
  let requests = 0;
  try {
    for (const call of CALL_NAMES) {
      const cell: Cell = { server, call, round, baseUrl: running.baseUrl, pid: running.pid };
      await verifyAnswer(server.id, running.baseUrl, CALLS[call]);
      const [measured, answered] = await measureCell(cell, settings);
      await verifyAnswer(server.id, running.baseUrl, CALLS[call]);
      requests += answered + 2;
      record(results, server.id, call, measured);
    }
  } finally {
    await running.stop();
  }
  if (logFile) {
    // A variant with logging off never opens the file.
    const text = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    rmSync(logFile, { force: true });
    const tally = logs.get(server.id) ?? { bytes: 0, lines: 0, requests: 0 };
    logs.set(server.id, {
      bytes: tally.bytes + Buffer.byteLength(text),
      lines: tally.lines + text.split("\n").filter(Boolean).length,
      requests: tally.requests + requests,
    });
  }
}

async function main(): Promise<number> {
  const settings = readSettings(process.argv.slice(2), process.env);
  if (!settings) return 0;
  const servers = selectServers(settings.servers);
  if (settings.profileDir) {
    settings.profileDir = resolve(settings.profileDir);
    mkdirSync(settings.profileDir, { recursive: true });
  }
  const cpus = pinCpus(settings.pin);
  const facts = describeRun(settings, cpus.note);
  progress(facts.join("\n"));

  const results: Results = new Map();
  const logs = new Map<string, LogTally>();
  // Rounds interleave the servers, so a slow spell of the machine hits all of them alike.
  for (let round = 1; round <= settings.rounds; round++) {
    for (const server of servers) await benchServer(server, round, settings, cpus, results, logs);
  }

  const { lines, missed } = formatReport(servers, results, settings.rounds);
  const logLines = [...logs].map(
    ([id, tally]) =>
      `- ${id} logged ${(tally.lines / tally.requests).toFixed(2)} lines, ${Math.round(tally.bytes / tally.requests)} bytes per request (pino to a file)`,
  );
  console.log(["", ...facts, "", ...lines, ...(logLines.length ? ["", "Logging:", ...logLines] : []), ""].join("\n"));
  console.log(missed.length === 0 ? "Targets: all met." : `Targets MISSED:\n${missed.map((m) => `- ${m}`).join("\n")}`);
  if (settings.profileDir) console.log(`CPU profiles of the servers: ${settings.profileDir} (summarize: npx tsx bench/profile.ts <dir>/<server>-round<n>)`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(`\nBENCHMARK RUN BROKEN: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
