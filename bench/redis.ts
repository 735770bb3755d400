/**
 * `npm run bench:redis`: the calls as users of a Redis-backed provider feel them, each server on a
 * real redis-server of its own that this harness starts:
 * - `provider-redis-store`: the provider with trivial handlers, its registry in a RedisStore;
 * - `example`: the Redis example provider (examples/redis) with a `shared` instance.
 * Per run: status (interleaved slices, ratio example ÷ provider-redis-store per slice), then
 * bind-app of `--apps` distinct apps and unbind-app of the same apps. For every phase, from the
 * Redis server's own counters (INFO stats): new TCP connections and commands per call. After
 * each run, the RSS of each server process. `--runs` runs back to back on the same processes
 * show whether memory grows. `--users` first gives the example's server that many more ACL users
 * (copies of one the example created), timing ACL SAVE as they grow. Exits non-zero only when the
 * run is broken (a non-2xx answer, an error); targets are reported, never failed.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bindAppForm, CALLS, unbindAppForm, type CallName } from "./calls.js";
import { compileServers } from "./build.js";
import { startServer, type RunningServer } from "./child.js";
import { NOISY_OTHERS_PERCENT, waitForQuiet, withCpuShare, type CpuShare } from "./cpu-share.js";
import { pinCpus } from "./cpus.js";
import { machineFacts } from "./facts.js";
import { progress, rssMiB, runHarness } from "./process.js";
import { brokenBecause, load, type Amount, type Measurement } from "./load.js";
import { REDIS_SERVERS, type ServerSpec } from "./servers/catalog.js";
import { verifyAnswer } from "./verify.js";
import { redisCounters, startBenchRedis, type BenchRedis } from "./redis-server.js";
import { describeWork, workOf } from "./redis-stats.js";
import { median, row } from "./tables.js";

const USAGE = `Usage: npm run bench:redis -- [options]

  --connections <n>   concurrent connections, pipelining 1, keep-alive      (default 256)
  --sweeps <n>        status: interleaved sweeps of one slice per server    (default 5)
  --slice <s>         seconds per status slice                              (default 2)
  --warmup <s>        seconds of discarded status load per server per run   (default 2)
  --apps <n>          distinct apps bound, then unbound, per server per run  (default 2000)
  --users <n>         before the runs, give the example's Redis <n> more ACL
                      users like the ones it creates; time ACL SAVE as they
                      grow                                                  (default 0)
  --runs <n>          runs back to back on the same server processes       (default 3)
  --quiet-wait <s>    before each phase, wait up to <s> s for other processes
                      to use under 15% of a CPU                             (default 20; 0: no wait)
  --help`;

interface Settings {
  connections: number;
  sweeps: number;
  slice: number;
  warmup: number;
  apps: number;
  users: number;
  runs: number;
  quietWait: number;
}

function readSettings(): Settings | undefined {
  const { values } = parseArgs({
    options: Object.fromEntries(
      ["connections", "sweeps", "slice", "warmup", "apps", "users", "runs", "quiet-wait"].map((name) => [name, { type: "string" }] as const),
    ),
    allowPositionals: false,
    strict: false,
  });
  if (process.argv.includes("--help")) {
    console.log(USAGE);
    return undefined;
  }
  const number = (name: string, fallback: number) => {
    const given = values[name];
    if (given === undefined) return fallback;
    const value = Number(given);
    if (!Number.isFinite(value) || value < 0) throw new Error(`--${name} must be a number, got "${String(given)}".`);
    return value;
  };
  return {
    connections: number("connections", 256),
    sweeps: number("sweeps", 5),
    slice: number("slice", 2),
    warmup: number("warmup", 2),
    apps: number("apps", 2000),
    users: number("users", 0),
    runs: number("runs", 3),
    quietWait: number("quiet-wait", 20),
  };
}

/** A server and the redis-server it alone uses (the example: the one it administers, and its registry). */
interface Member {
  spec: ServerSpec;
  running: RunningServer;
  redis: BenchRedis;
}

async function startMember(spec: ServerSpec, serverCpu: number | undefined): Promise<Member> {
  const redis = await startBenchRedis(spec.id);
  const running = await startServer(spec, { cpu: serverCpu, env: { BENCH_REDIS_URL: redis.url }, stdoutFile: join(redis.dir, "provider.log") }).catch(
    async (error: unknown) => {
      await redis.stop();
      throw error;
    },
  );
  return { spec, running, redis };
}

async function stopMember(member: Member): Promise<void> {
  await member.running.stop();
  await member.redis.stop();
}

/** ACL SAVE's time at one number of users on the server. */
interface AclSaveTiming {
  users: number;
  medianMs: number;
  fileMiB: number;
}

const SAVES_PER_STEP = 5;

/**
 * Gives the example's server `count` more ACL users, copies (name aside) of an app user the
 * example creates for a bind, in steps of a tenth; times ACL SAVE (median of 5) after each step.
 */
async function addUsers(member: Member, count: number): Promise<AclSaveTiming[]> {
  const { client, dir } = member.redis;
  const bound = await fetch(`${member.running.baseUrl}${CALLS["bind-app"].path}`, {
    method: "POST",
    headers: CALLS["bind-app"].headers,
    body: bindAppForm("bench-model"),
  });
  if (bound.status !== 201) throw new Error(`Binding the model app answered ${bound.status}: ${await bound.text()}`);
  const model = ((await bound.json()) as Record<string, string>).REDIS_USER;
  const line = (await client.aclList()).find((entry) => entry.startsWith(`user ${model} `));
  if (line === undefined) throw new Error(`The example's user ${model} is not in ACL LIST.`);
  const rules = line.split(" ").slice(2);
  const timings: AclSaveTiming[] = [];
  const step = Math.max(1, Math.ceil(count / 10));
  for (let added = 0; added < count; ) {
    const next = Math.min(count, added + step);
    const creating: Array<Promise<unknown>> = [];
    for (; added < next; added++) creating.push(client.aclSetUser(`bench-filler.app.u${added}`, rules));
    await Promise.all(creating);
    const times: number[] = [];
    for (let i = 0; i < SAVES_PER_STEP; i++) {
      const started = process.hrtime.bigint();
      await client.aclSave();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
    const users = (await client.aclUsers()).length;
    timings.push({ users, medianMs: median(times), fileMiB: statSync(join(dir, "users.acl")).size / 2 ** 20 });
    progress(`  ${users} ACL users: ACL SAVE ${median(times).toFixed(1)} ms`);
  }
  return timings;
}

interface Phase {
  server: string;
  call: CallName;
  measurement: Measurement;
  cpu?: CpuShare;
  /** New TCP connections the Redis server accepted, per call answered. */
  connectionsPerCall: number;
  /** Commands the Redis server ran, per call answered (INFO itself excluded). */
  commandsPerCall: number;
  /** Redis's own time per call, by command. */
  redisTime: string;
}

async function measure(member: Member, call: CallName, amount: Amount, connections: number): Promise<Phase> {
  const before = await redisCounters(member.redis.client);
  const [measurement, cpu] = await withCpuShare([member.running.pid, member.redis.pid], () => load(member.running.baseUrl, CALLS[call], amount, connections));
  const after = await redisCounters(member.redis.client);
  const broken = brokenBecause(measurement);
  if (broken) throw new Error(`Server "${member.spec.id}", ${call}: ${broken}.`);
  // Less the INFO of the reading before.
  const work = workOf(before, after, measurement.requests, 1);
  return {
    server: member.spec.id,
    call,
    measurement,
    cpu,
    connectionsPerCall: work.connections,
    commandsPerCall: work.commands,
    redisTime: describeWork(work, Infinity),
  };
}

async function quiet(members: Member[], settings: Settings): Promise<void> {
  const own = members.flatMap((member) => [member.running.pid, member.redis.pid]);
  await waitForQuiet(own, settings.quietWait);
}

async function oneRun(run: number, members: Member[], settings: Settings): Promise<Phase[]> {
  const phases: Phase[] = [];
  for (const member of members) {
    await verifyAnswer(member.spec.id, member.running.baseUrl, CALLS.status);
    if (settings.warmup > 0) await load(member.running.baseUrl, CALLS.status, { seconds: settings.warmup }, settings.connections);
  }
  for (let sweep = 0; sweep < settings.sweeps; sweep++) {
    await quiet(members, settings);
    const order = sweep % 2 === 0 ? members : [...members].reverse();
    for (const member of order) phases.push(await measure(member, "status", { seconds: settings.slice }, settings.connections));
    progress(`run ${run} status sweep ${sweep + 1}: ${phases.slice(-members.length).map((p) => `${p.server} ${Math.round(p.measurement.requestsPerSecond)}`).join(", ")} req/s`);
  }
  const app = (index: number) => `bench-r${run}-${index}`;
  for (const member of members) {
    await quiet(members, settings);
    const bind = await measure(member, "bind-app", { requests: settings.apps, body: (i) => bindAppForm(app(i)) }, settings.connections);
    const unbind = await measure(member, "unbind-app", { requests: settings.apps, body: (i) => unbindAppForm(app(i)) }, settings.connections);
    phases.push(bind, unbind);
    progress(`run ${run} ${member.spec.id}: bind-app ${Math.round(bind.measurement.requestsPerSecond)} req/s, unbind-app ${Math.round(unbind.measurement.requestsPerSecond)} req/s`);
  }
  return phases;
}

function report(
  members: Member[],
  runs: Phase[][],
  rss: Array<Map<string, number | undefined>>,
  saves: AclSaveTiming[],
  settings: Settings,
): string[] {
  const all = runs.flat();
  const lines = [
    `Per server and call, median over runs (status: over every slice of every run); ${settings.connections} connections; ` +
      `${settings.users} extra ACL users on the example's server, which holds its registry too.`,
    "",
    row(["server", "call", "req/s", "p50 ms", "p99 ms", "server+redis CPU µs/req", "new TCP connections to Redis per call", "Redis commands per call"]),
    row(["---", "---", "---:", "---:", "---:", "---:", "---:", "---:"]),
  ];
  for (const member of members) {
    for (const call of ["status", "bind-app", "unbind-app"] as const) {
      const phases = all.filter((phase) => phase.server === member.spec.id && phase.call === call);
      if (phases.length === 0) continue;
      const cpuPerRequest = phases.flatMap((p) => (p.cpu ? [(p.cpu.serverSeconds * 1e6) / p.measurement.requests] : []));
      lines.push(
        row([
          member.spec.id,
          call,
          Math.round(median(phases.map((p) => p.measurement.requestsPerSecond))),
          median(phases.map((p) => p.measurement.p50Ms)).toFixed(1),
          median(phases.map((p) => p.measurement.p99Ms)).toFixed(1),
          cpuPerRequest.length > 0 ? median(cpuPerRequest).toFixed(0) : "-",
          median(phases.map((p) => p.connectionsPerCall)).toFixed(4),
          median(phases.map((p) => p.commandsPerCall)).toFixed(2),
        ]),
      );
    }
  }
  lines.push("", "Redis's own time per call, by command (run 1; `×` calls per call, then µs per call):", "");
  for (const phase of runs[0] ?? []) {
    if (phase.call !== "status" || phase === runs[0]!.find((p) => p.server === phase.server && p.call === "status")) {
      lines.push(`- ${phase.server} ${phase.call}: ${phase.redisTime || "no command"}`);
    }
  }
  // The ratio inside each sweep: the two servers measured seconds apart, under the same conditions.
  const ratios: number[] = [];
  const statusPhases = all.filter((phase) => phase.call === "status");
  for (let i = 0; i + 1 < statusPhases.length; i += 2) {
    const pair = statusPhases.slice(i, i + 2);
    const example = pair.find((p) => p.server === "example");
    const store = pair.find((p) => p.server === "provider-redis-store");
    if (example && store) ratios.push(example.measurement.requestsPerSecond / store.measurement.requestsPerSecond);
  }
  if (ratios.length > 0) {
    lines.push("", `example status ÷ provider-redis-store status, median of ${ratios.length} per-sweep ratios: ${(median(ratios) * 100).toFixed(0)}% (target ≥ 50%)`);
  }
  if (saves.length > 0) {
    lines.push("", `ACL SAVE on the example's server (median of ${SAVES_PER_STEP}), as users were added:`, "");
    lines.push(row(["ACL users", "ACL SAVE ms", "ACL file MiB"]), row(["---:", "---:", "---:"]));
    for (const timing of saves) lines.push(row([timing.users, timing.medianMs.toFixed(1), timing.fileMiB.toFixed(1)]));
  }
  lines.push("", "RSS after each run (MiB):", "", row(["server", ...runs.map((_, i) => `run ${i + 1}`)]), row(["---", ...runs.map(() => "---:")]));
  for (const member of members) lines.push(row([member.spec.id, ...rss.map((byServer) => byServer.get(member.spec.id)?.toFixed(0) ?? "-")]));
  const others = all.flatMap((p) => (p.cpu ? [p.cpu.others] : []));
  if (others.length > 0) {
    const noisy = all.filter((p) => (p.cpu?.others ?? 0) > NOISY_OTHERS_PERCENT).length;
    lines.push("", `Measurement quality: ${noisy} of ${all.length} phases ran while other processes used over ${NOISY_OTHERS_PERCENT}% of a CPU (at most ${Math.max(...others).toFixed(0)}%).`);
  }
  lines.push("", "Servers:", ...members.map((member) => `- ${member.spec.id}: ${member.spec.description}`));
  return lines;
}

async function main(): Promise<number> {
  const settings = readSettings();
  if (!settings) return 0;
  const cpus = pinCpus(true);
  progress(`cpus: ${cpus.note}`);
  progress("compiling the framework (its dist/) and the servers (tsc -p bench/tsconfig.servers.json)");
  compileServers();
  const members: Member[] = [];
  const runs: Phase[][] = [];
  const rss: Array<Map<string, number | undefined>> = [];
  let saves: AclSaveTiming[] = [];
  try {
    for (const spec of REDIS_SERVERS) members.push(await startMember(spec, cpus.server));
    const example = members.find((member) => member.spec.id === "example");
    if (settings.users > 0 && example) saves = await addUsers(example, settings.users);
    for (let run = 1; run <= settings.runs; run++) {
      runs.push(await oneRun(run, members, settings));
      rss.push(new Map(members.map((member) => [member.spec.id, rssMiB(member.running.pid)])));
    }
  } finally {
    for (const member of members) await stopMember(member);
  }
  const facts = [...machineFacts(), `cpus: ${cpus.note}; each redis-server unpinned`];
  console.log(["", ...facts, "", ...report(members, runs, rss, saves, settings), ""].join("\n"));
  return 0;
}

runHarness(main);
