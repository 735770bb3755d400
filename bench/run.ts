/**
 * `npm run bench`: requests per second and p99 latency of the status and bind-app calls on the
 * provider and three reference servers, each server in its own child process, side by side in
 * one run. Exits non-zero only when the run is broken (a wrong answer, a non-2xx, an error);
 * missed speed targets are reported, not failed.
 *
 * All servers run at once (idle but one); per call, each is warmed up, then measured in short
 * interleaved sweeps (A B C D E, B C D E A, …), so slow spells of a shared machine hit every
 * server alike and sweeps disturbed by other processes can be set aside.
 */
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CALL_NAMES, CALLS, type CallName } from "./calls.js";
import { compileServers } from "./build.js";
import { startServer, type RunningServer } from "./child.js";
import { NOISY_OTHERS_PERCENT, waitForQuiet, withCpuShare } from "./cpu-share.js";
import { pinCpus } from "./cpus.js";
import { progress, rssMiB, runHarness } from "./process.js";
import { describeRun } from "./facts.js";
import { brokenBecause, load, type Measurement } from "./load.js";
import { redisCounters, startBenchRedis, type BenchRedis, type Counters } from "./redis-server.js";
import { describeWork, workOf } from "./redis-stats.js";
import { formatReport, type Measured, type Results, type Sweep } from "./report.js";
import { SERVERS, type ServerSpec } from "./servers/catalog.js";
import { plannedSweeps, readSettings, type Settings } from "./settings.js";
import { verifyAnswer } from "./verify.js";

/** A started server and what it has answered so far. */
interface Member {
  spec: ServerSpec;
  running: RunningServer;
  /** The redis-server it alone uses (the Redis-store row). */
  redis?: BenchRedis;
  /** The processes whose CPU time is the server's: itself and its redis-server. */
  pids: number[];
  /** Where a logging server's stdout, hence its pino log, goes: a real file (the provider rows and the peer). */
  logFile?: string;
  requests: number;
}


async function startFleet(servers: readonly ServerSpec[], serverCpu: number | undefined): Promise<Member[]> {
  const members: Member[] = [];
  try {
    for (const spec of servers) {
      const logFile = spec.logs ? join(tmpdir(), `provider-kit-bench-${process.pid}-${spec.id}.log`) : undefined;
      const redis = spec.redis ? await startBenchRedis(spec.id) : undefined;
      const running = await startServer(spec, {
        cpu: serverCpu,
        stdoutFile: logFile,
        env: redis && { BENCH_REDIS_URL: redis.url },
      }).catch(async (error: unknown) => {
        await redis?.stop();
        throw error;
      });
      const pids = redis ? [running.pid, redis.pid] : [running.pid];
      members.push({ spec, running, redis, pids, logFile, requests: 0 });
    }
  } catch (error) {
    await stopFleet(members);
    throw error;
  }
  return members;
}

async function stopFleet(members: Member[]): Promise<void> {
  const stopped = await Promise.allSettled(
    members.map(async (member) => {
      try {
        await member.running.stop();
      } finally {
        await member.redis?.stop();
      }
    }),
  );
  const failed = stopped.find((outcome): outcome is PromiseRejectedResult => outcome.status === "rejected");
  if (failed) throw failed.reason;
}

async function loadOrFail(member: Member, call: CallName, seconds: number, settings: Settings, phase: string): Promise<Measurement> {
  const measurement = await load(member.running.baseUrl, CALLS[call], { seconds }, settings.connections);
  const broken = brokenBecause(measurement);
  if (broken) throw new Error(`Server "${member.spec.id}", ${call}, ${phase}: ${broken}.`);
  member.requests += measurement.requests;
  return measurement;
}

async function verifyAll(members: Member[], call: CallName): Promise<void> {
  for (const member of members) {
    await verifyAnswer(member.spec.id, member.running.baseUrl, CALLS[call]);
    member.requests += 1;
  }
}

/**
 * Measure every server for one slice per sweep, rotating the order, until enough sweeps ran
 * undisturbed by other processes (or the extra sweeps allowed are spent).
 */
async function measureSweeps(members: Member[], call: CallName, settings: Settings): Promise<Sweep[]> {
  const planned = plannedSweeps(settings);
  const ownPids = members.flatMap((member) => member.pids);
  const sweeps: Sweep[] = [];
  const cleanCount = () => sweeps.filter((sweep) => !sweep.noisy).length;
  while (cleanCount() < planned && sweeps.length < planned + settings.extraSweeps) {
    await waitForQuiet(ownPids, settings.quietWait);
    const sweep: Sweep = { measured: new Map(), noisy: false };
    const start = sweeps.length % members.length;
    for (const member of [...members.slice(start), ...members.slice(0, start)]) {
      const [measurement, cpu] = await withCpuShare(member.pids, () => loadOrFail(member, call, settings.slice, settings, "measurement"));
      sweep.measured.set(member.spec.id, { ...measurement, cpu });
      if (cpu && cpu.others > NOISY_OTHERS_PERCENT) sweep.noisy = true;
    }
    sweeps.push(sweep);
    progress(describeSweep(call, sweeps.length, sweep, members));
  }
  return sweeps;
}

function describeSweep(call: CallName, index: number, sweep: Sweep, members: Member[]): string {
  const cells = members.map((member) => {
    const measured: Measured | undefined = sweep.measured.get(member.spec.id);
    return measured ? `${member.spec.id} ${Math.round(measured.requestsPerSecond)}` : "";
  });
  const others = Math.max(...[...sweep.measured.values()].map((m) => m.cpu?.others ?? 0));
  return `${call} sweep ${index}: ${cells.join(", ")} req/s${sweep.noisy ? `  (disturbed: others up to ${others.toFixed(0)}% of a CPU)` : ""}`;
}

/** Lines per request and bytes per request the provider logged: shows logging really ran. */
function logVolume(members: Member[]): string[] {
  return members.flatMap((member) => {
    if (!member.logFile) return [];
    const text = readFileSync(member.logFile, "utf8");
    rmSync(member.logFile, { force: true });
    const lines = text.split("\n").filter(Boolean).length;
    return [
      `- ${member.spec.id} logged ${(lines / member.requests).toFixed(2)} lines, ` +
        `${Math.round(Buffer.byteLength(text) / member.requests)} bytes per request (stdout to a file)`,
    ];
  });
}

/** Each redis-server's counters, read around the sweeps of one call: only its own server talks to it. */
async function readRedisCounters(members: Member[]): Promise<Map<string, Counters>> {
  const readings = new Map<string, Counters>();
  for (const member of members) if (member.redis) readings.set(member.spec.id, await redisCounters(member.redis.client));
  return readings;
}

/** Redis commands per call of the servers with a redis-server, and which ones, over the sweeps of `call`. */
function redisUse(call: CallName, sweeps: Sweep[], before: Map<string, Counters>, after: Map<string, Counters>): string[] {
  return [...before].map(([id, then]) => {
    const now = after.get(id)!;
    const requests = sweeps.reduce((sum, sweep) => sum + (sweep.measured.get(id)?.requests ?? 0), 0);
    const work = workOf(then, now, requests, 1);
    return `- ${id} ${call}: ${work.commands.toFixed(2)} commands per call (${describeWork(work, Infinity)})`;
  });
}

/** Resident memory of each server after the load (Linux /proc), in MiB. */
function memoryAfterLoad(members: Member[]): string[] {
  return members.flatMap((member) => {
    const rss = rssMiB(member.running.pid);
    return rss === undefined ? [] : [`- ${member.spec.id}: ${rss.toFixed(0)} MiB`];
  });
}

async function main(): Promise<number> {
  const settings = readSettings(process.argv.slice(2), process.env);
  if (!settings) return 0;
  const cpus = pinCpus(settings.pin);
  const facts = describeRun(settings, cpus.note);
  progress(facts.join("\n"));
  progress("compiling the framework (its dist/) and the servers (tsc -p bench/tsconfig.servers.json)");
  compileServers();

  const members = await startFleet(SERVERS, cpus.server);
  const results: Results = new Map();
  let logging: string[];
  let memory: string[];
  const redis: string[] = [];
  try {
    for (const call of CALL_NAMES) {
      await verifyAll(members, call);
      if (settings.warmup > 0) {
        for (const member of members) await loadOrFail(member, call, settings.warmup, settings, "warm-up");
      }
      const before = await readRedisCounters(members);
      const sweeps = await measureSweeps(members, call, settings);
      redis.push(...redisUse(call, sweeps, before, await readRedisCounters(members)));
      results.set(call, sweeps);
      await verifyAll(members, call);
    }
    memory = memoryAfterLoad(members);
  } finally {
    await stopFleet(members);
    logging = logVolume(members);
  }

  const { lines, missed, noisy } = formatReport(SERVERS, results, plannedSweeps(settings));
  console.log(
    [
      "",
      ...facts,
      "",
      ...lines,
      ...(redis.length ? ["", "Redis commands per call, counted by the redis-server (INFO; `×` calls per call, then Redis's µs per call):", ...redis] : []),
      ...(logging.length ? ["", "Logging:", ...logging] : []),
      ...(memory.length ? ["", "RSS after the load:", ...memory] : []),
      "",
    ].join("\n"),
  );
  const caveat = noisy ? " (NOISY run: other processes competed for the CPUs; do not trust these verdicts)" : "";
  if (missed.length === 0) console.log(`Targets: all met${caveat}.`);
  else console.log(`Targets MISSED${caveat}:\n${missed.map((m) => `- ${m}`).join("\n")}`);
  return 0;
}

runHarness(main);
