/**
 * `npm run bench:start`: cold start to first answer (`GET /healthcheck` → 200), each start in a
 * fresh process (and, for the example, a fresh data directory, so its embedded Redis starts too):
 * - `provider`: a compiled provider (bench/servers/cold-provider.ts: createProvider, listen);
 * - `example`: the compiled Redis example (examples/redis/main.ts, as `provider-kit-redis` runs);
 * - `example via npm start`: what `npm start` runs (npm, then node with tsx).
 * The clock starts just before the process is spawned; the harness asks every 2 ms. Also shown,
 * for the server process right after its first answer (not for npm start: that process is npm's):
 * the CPU time it used to get there, which other work on the machine inflates far less than the
 * wall time, and its RSS.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { compiledEntry, compileServers } from "./build.js";
import { CREDENTIALS } from "./calls.js";
import { processTicks, TICKS_PER_SECOND } from "./cpu-share.js";
import { machineFacts } from "./facts.js";
import { rssMiB, runHarness } from "./process.js";
import { median } from "./tables.js";
import { freePort } from "@provider-kit/platform/redis-server";

interface Target {
  id: string;
  command: (dataDir: string) => [string, string[]];
  /** true: the spawned process is the server, so its RSS is the server's. */
  direct: boolean;
}

const root = new URL("..", import.meta.url).pathname;
const TARGETS: Target[] = [
  { id: "provider", command: () => [process.execPath, [compiledEntry(join(root, "bench/servers/cold-provider.ts"))]], direct: true },
  { id: "example", command: () => [process.execPath, [compiledEntry(join(root, "examples/redis/main.ts"))]], direct: true },
  { id: "example via npm start", command: () => ["npm", ["start", "--silent"]], direct: false },
];

const ANSWER_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 15_000;

async function firstAnswer(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode} before answering`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** True while any process of the group `pid` leads is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the whole group (npm, node, embedded redis-servers), then wait until every process in it ended. */
async function stopGroup(pid: number | undefined): Promise<void> {
  if (pid === undefined || !groupAlive(pid)) return;
  process.kill(-pid, "SIGTERM");
  const deadline = Date.now() + STOP_TIMEOUT_MS;
  while (groupAlive(pid)) {
    if (Date.now() > deadline) process.kill(-pid, "SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Start {
  ms: number;
  /** CPU time of the server process up to its first answer, user + system (10 ms resolution). */
  cpuMs?: number;
  rss?: number;
}

function cpuMs(pid: number | undefined): number | undefined {
  try {
    return pid === undefined ? undefined : (processTicks(pid) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined; // no /proc
  }
}

async function startOnce(target: Target): Promise<Start> {
  const dataDir = mkdtempSync(join(tmpdir(), "provider-kit-bench-start-"));
  const port = await freePort();
  const [command, args] = target.command(dataDir);
  const startedAt = performance.now();
  const child = spawn(command, args, {
    cwd: root,
    env: {
      ...process.env,
      NODE_ENV: "production",
      PORT: String(port),
      HOST: "127.0.0.1",
      PROVIDER_USERNAME: CREDENTIALS.username,
      PROVIDER_PASSWORD: CREDENTIALS.password,
      DATA_DIR: dataDir,
      LOG_FORMAT: "json",
      LOG_LEVEL: "warn",
    },
    stdio: ["ignore", "ignore", "pipe"],
    // Its own process group: npm start's node and the example's embedded redis-servers are in it.
    detached: true,
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
  try {
    await firstAnswer(`http://127.0.0.1:${port}/healthcheck`, child);
    const ms = performance.now() - startedAt;
    if (!target.direct) return { ms };
    return { ms, cpuMs: cpuMs(child.pid), rss: rssMiB(child.pid) };
  } catch (error) {
    throw new Error(`${target.id}: ${error instanceof Error ? error.message : String(error)}\n${stderr}`, { cause: error });
  } finally {
    await stopGroup(child.pid);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const each = (values: Array<number | undefined>): string => values.map((value) => (value === undefined ? "-" : value.toFixed(0))).join(", ");

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { runs: { type: "string" } } });
  const runs = Number(values.runs ?? 5);
  process.stderr.write("compiling the framework (its dist/) and the servers (tsc -p bench/tsconfig.servers.json)\n");
  compileServers();
  const lines = [
    ...machineFacts(),
    "",
    `Cold start to first answer (GET /healthcheck 200), ${runs} starts each, one after another:`,
    "",
    `| what | median ms | each start, ms | median CPU ms | each start, CPU ms | RSS after first answer, MiB |`,
    `| --- | ---: | --- | ---: | --- | --- |`,
  ];
  for (const target of TARGETS) {
    const results: Start[] = [];
    for (let run = 0; run < runs; run++) {
      results.push(await startOnce(target));
      process.stderr.write(`${target.id}: ${results.at(-1)!.ms.toFixed(0)} ms\n`);
    }
    const cpu = results.map((r) => r.cpuMs);
    const cpuMedian = target.direct ? median(cpu.map((ms) => ms ?? NaN)).toFixed(0) : "-";
    const wall = results.map((r) => r.ms);
    lines.push(`| ${target.id} | ${median(wall).toFixed(0)} | ${each(wall)} | ${cpuMedian} | ${each(cpu)} | ${each(results.map((r) => r.rss))} |`);
  }
  console.log(["", ...lines, ""].join("\n"));
  return 0;
}

runHarness(main, "START BENCHMARK");
