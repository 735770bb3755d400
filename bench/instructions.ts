/**
 * `npx tsx bench/instructions.ts`: what one call costs each server, in
 * instructions, counted by valgrind's callgrind. The count moves with other work on the machine
 * far less than req/s and CPU time do (the collector's timing still moves it by a few per cent),
 * so two servers, or two commits, compare on a busy one.
 *
 * Each server runs alone under callgrind with counting off; it answers `--warmup` calls of each
 * kind (V8 optimizes what it runs often), then counting is switched on (`callgrind_control`)
 * for exactly `--requests` calls at `--connections` connections, off again, and the count read.
 * Every thread of the server process is counted (garbage collection, libuv), nothing outside it.
 * The servers and their settings are `npm run bench`'s (`bench/servers/catalog.ts`).
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compileServers } from "./build.js";
import { CALL_NAMES, CALLS, type CallName } from "./calls.js";
import { startServer } from "./child.js";
import { machineFacts } from "./facts.js";
import { brokenBecause, load } from "./load.js";
import { progress, runHarness } from "./process.js";
import { startBenchRedis } from "./redis-server.js";
import { SERVERS, type ServerSpec } from "./servers/catalog.js";
import { row } from "./tables.js";
import { verifyAnswer } from "./verify.js";

const USAGE = `Usage: npx tsx bench/instructions.ts [options]

  --servers <ids>      comma-separated server ids (default: provider-registry,express-handwritten)
  --calls <names>      comma-separated calls (default: status,bind-app)
  --warmup <n>         calls of each kind answered, uncounted, before counting (default 5000)
  --requests <n>       calls counted (default 2000)
  --connections <n>    concurrent connections, pipelining 1 (default 20, as npm run bench)
  --keep <dir>         keep each counted window's profile in <dir>, for callgrind_annotate
  --help`;

/** Node under callgrind starts tens of times slower than alone. */
const START_TIMEOUT_MS = 180_000;
/** An answer under full instrumentation takes tens of times longer too. */
const ANSWER_TIMEOUT_S = 60;

interface Settings {
  servers: ServerSpec[];
  calls: CallName[];
  warmup: number;
  requests: number;
  connections: number;
  /** Where the counted windows' profiles are kept; undefined: not kept. */
  keep: string | undefined;
}

function positive(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got "${raw}".`);
  return value;
}

function readSettings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      servers: { type: "string", default: "provider-registry,express-handwritten" },
      calls: { type: "string", default: CALL_NAMES.join(",") },
      warmup: { type: "string", default: "5000" },
      requests: { type: "string", default: "2000" },
      connections: { type: "string", default: "20" },
      keep: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const servers = values.servers.split(",").map((id) => {
    const spec = SERVERS.find((server) => server.id === id);
    if (spec === undefined) throw new Error(`No server "${id}"; the servers are ${SERVERS.map((server) => server.id).join(", ")}.`);
    return spec;
  });
  const calls = values.calls.split(",").map((name) => {
    if (!CALL_NAMES.includes(name as CallName)) throw new Error(`No call "${name}"; the calls are ${CALL_NAMES.join(", ")}.`);
    return name as CallName;
  });
  return {
    servers,
    calls,
    warmup: positive("warmup", values.warmup),
    requests: positive("requests", values.requests),
    connections: positive("connections", values.connections),
    keep: values.keep,
  };
}

const callgrind = (pid: number, ...args: string[]) => execFileSync("callgrind_control", [...args, String(pid)], { encoding: "utf8" });

/** Instructions counted so far, over every thread (`callgrind_control -e Ir` prints one line per thread). */
function instructionsCounted(pid: number): number {
  const threads = [...callgrind(pid, "-e", "Ir").matchAll(/^\s*Th\s+\d+\s+([\d,]+)\s*$/gm)];
  if (threads.length === 0) throw new Error(`callgrind_control printed no counts for process ${pid}.`);
  return threads.reduce((sum, [, count]) => sum + Number(count!.replaceAll(",", "")), 0);
}

async function answerOrFail(spec: ServerSpec, baseUrl: string, call: CallName, requests: number, connections: number): Promise<void> {
  const measurement = await load(baseUrl, CALLS[call], { requests }, connections, { timeoutSeconds: ANSWER_TIMEOUT_S });
  const broken = brokenBecause(measurement);
  if (broken) throw new Error(`Server "${spec.id}", ${call}: ${broken}.`);
}

/** Instructions per call of one server, by call. */
async function countServer(spec: ServerSpec, settings: Settings): Promise<Map<CallName, number>> {
  const scratch = join(settings.keep ?? tmpdir(), `provider-kit-instructions-${process.pid}-${spec.id}`);
  const redis = spec.redis ? await startBenchRedis(spec.id) : undefined;
  const counts = new Map<CallName, number>();
  try {
    const server = await startServer(spec, {
      launcher: ["valgrind", "--quiet", "--tool=callgrind", "--instr-atstart=no", `--callgrind-out-file=${scratch}.callgrind`],
      stdoutFile: spec.logs ? `${scratch}.log` : undefined,
      env: redis && { BENCH_REDIS_URL: redis.url },
      startTimeoutMs: START_TIMEOUT_MS,
    });
    try {
      for (const call of settings.calls) {
        await verifyAnswer(spec.id, server.baseUrl, CALLS[call]);
        progress(`${spec.id} ${call}: ${settings.warmup} calls to warm up`);
        await answerOrFail(spec, server.baseUrl, call, settings.warmup, settings.connections);
        callgrind(server.pid, "--zero");
        callgrind(server.pid, "--instr=on");
        await answerOrFail(spec, server.baseUrl, call, settings.requests, settings.connections);
        // Read while counting is on (off, callgrind prints no counts): the server is idle by now.
        const perCall = instructionsCounted(server.pid) / settings.requests;
        if (settings.keep !== undefined) callgrind(server.pid, `--dump=${spec.id} ${call}`);
        callgrind(server.pid, "--instr=off");
        counts.set(call, perCall);
        progress(`${spec.id} ${call}: ${Math.round(perCall)} instructions per call`);
      }
    } finally {
      await server.stop();
    }
  } finally {
    await redis?.stop();
    rmSync(`${scratch}.log`, { force: true });
    // The profile of the whole run (counting was off but for the windows, each dumped to `.callgrind.<n>`).
    rmSync(`${scratch}.callgrind`, { force: true });
  }
  return counts;
}

async function main(): Promise<number> {
  const settings = readSettings(process.argv.slice(2));
  if (!settings) return 0;
  const facts = [
    ...machineFacts(),
    `settings: ${settings.warmup} calls to warm up, ${settings.requests} counted, ${settings.connections} connections, pipelining 1, keep-alive`,
  ];
  progress(facts.join("\n"));
  progress("compiling the framework and the servers");
  compileServers();
  const results = new Map<string, Map<CallName, number>>();
  for (const spec of settings.servers) results.set(spec.id, await countServer(spec, settings));

  const thousands = (count: number | undefined) => (count === undefined ? "-" : `${(count / 1000).toFixed(1)}k`);
  const [first] = settings.servers;
  const lines = [
    "",
    ...facts,
    "",
    "Instructions per call (callgrind, every thread of the server process):",
    "",
    row(["server", ...settings.calls]),
    row(["---", ...settings.calls.map(() => "---:")]),
    ...settings.servers.map((spec) => row([spec.id, ...settings.calls.map((call) => thousands(results.get(spec.id)?.get(call)))])),
  ];
  if (first !== undefined && settings.servers.length > 1) {
    lines.push("", `Relative to ${first.id} (its instructions per call ÷ the server's; above 1: ${first.id} does more):`, "");
    for (const spec of settings.servers.slice(1)) {
      const ratios = settings.calls.map((call) => {
        const [mine, theirs] = [results.get(first.id)?.get(call), results.get(spec.id)?.get(call)];
        return mine && theirs ? `${(mine / theirs).toFixed(2)}×` : "-";
      });
      lines.push(`- ${first.id} ÷ ${spec.id}: ${settings.calls.map((call, index) => `${call} ${ratios[index]}`).join(", ")}`);
    }
  }
  console.log(lines.join("\n"));
  return 0;
}

runHarness(main);
