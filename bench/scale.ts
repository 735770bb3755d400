/**
 * `npm run bench:scale`: does the provider stay flat as its registry grows (issue 15, section 4)?
 * Two servers, each run twice side by side, on a large and a small registry, every registry on a
 * real redis-server of its own that this harness starts:
 * - `provider-redis-store` (bench/servers/provider.ts, its registry in a RedisStore): the large
 *   registry bulk-loaded with `--instances` instances and `--bindings` bindings through the
 *   store's own API, the small one with `--small` instances (bindings in proportion);
 * - `example` (the Redis example, a `shared` instance): `--apps` apps bound on the large one (so
 *   that many ACL users on its Redis server), `--small` on the small one.
 * Then, on both sizes: status, bind-app and unbind-app (p50, p99, req/s, CPU and Redis commands
 * per call), one metrics scrape, the RSS after that load, and start to first answer. The report
 * gives each figure large ÷ small with the targets, and names the Redis commands whose count or
 * time per operation grows with the registry: work that walks everything. Exits non-zero only
 * when the run is broken (a non-2xx answer, an error); targets are reported, never failed.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { bindAppForm, CALLS, INSTANCE, unbindAppForm, type CallName } from "./calls.js";
import { compileServers } from "./build.js";
import { startServer, type RunningServer } from "./child.js";
import { waitForQuiet, withCpuShare } from "./cpu-share.js";
import { pinCpus } from "./cpus.js";
import { machineFacts } from "./facts.js";
import { brokenBecause, load, type Amount } from "./load.js";
import { progress, rssMiB, runHarness } from "./process.js";
import { startBenchRedis, type BenchRedis } from "./redis-server.js";
import { RedisWatch, workBetween } from "./redis-stats.js";
import { formatScaleReport, ms, SIZES, type Fill, type MemberInfo, type Operation, type Phase, type RssAfterLoad } from "./scale-report.js";
import { REDIS_SERVERS, type ServerSpec } from "./servers/catalog.js";
import { verifyAnswer } from "./verify.js";
import { pino } from "pino";
import { ACL_JOURNAL_KEY, REGISTRY_KEY_PREFIX } from "../examples/redis/redis-provider.js";
import { credentialChecker } from "../examples/redis/acl.js";
import { AclJournal } from "../examples/redis/acl-journal.js";
import { sharedPlan } from "../examples/redis/shared.js";
import { type InstanceRecord } from "provider-kit";
import { RedisStore } from "@provider-kit/redis-store";

const USAGE = `Usage: npm run bench:scale -- [options]

Fills a large and a small registry, then measures the same calls on both (see docs/benchmarks.md).

  --instances <n>         instances bulk-loaded into the large provider registry     (default 100000)
  --bindings <n>          bindings bulk-loaded, spread over those instances           (default 200000)
  --apps <n>              apps bound to the large example's shared instance           (default 10000)
  --small <n>             instances of the small registry (bindings in proportion),
                          apps bound on the small example                             (default 100)
  --servers <ids>         provider-redis-store,example                                (default both)
  --connections <n>       status: concurrent connections, keep-alive                  (default 32)
  --sweeps <n>            status: sweeps, each one slice per server, large and small
                          back to back                                                (default 3)
  --slice <s>             status: seconds per slice                                   (default 3)
  --warmup <s>            status: discarded seconds per server first                  (default 2)
  --binds <n>             bind-app of up to <n> new apps per server, then unbind-app
                          of the same apps                                            (default 1000)
  --bind-connections <n>  bind-app and unbind-app: concurrent connections             (default 1)
  --phase-seconds <s>     bind no more apps than fit in about <s> s                   (default 20)
  --scrapes <n>           GET /metrics per server, one after another                  (default 3)
  --starts <n>            starts per server, timed to the first answer                (default 3)
  --fill-concurrency <n>  store writes (or example binds) in flight while filling     (default 256)
  --quiet-wait <s>        before each measurement, wait up to <s> s for other
                          processes to use under 15% of a CPU                         (default 5; 0: no wait)
  --help

Smoke run: npm run bench:scale -- --instances 2000 --bindings 4000 --apps 300 --sweeps 1 --slice 1 --binds 100 --starts 1 --quiet-wait 0`;

const SERVER_IDS = ["provider-redis-store", "example"] as const;
type ServerId = (typeof SERVER_IDS)[number];

/** A server under test on one registry size, and the redis-server that alone holds its registry. */
interface Member extends MemberInfo {
  id: ServerId;
  spec: ServerSpec;
  redis: BenchRedis & { watch: RedisWatch };
  running?: RunningServer;
}

interface Settings {
  instances: number;
  bindings: number;
  apps: number;
  small: number;
  servers: ServerId[];
  connections: number;
  sweeps: number;
  slice: number;
  warmup: number;
  binds: number;
  bindConnections: number;
  phaseSeconds: number;
  scrapes: number;
  starts: number;
  fillConcurrency: number;
  quietWait: number;
}

const NUMBERS = {
  instances: 100_000,
  bindings: 200_000,
  apps: 10_000,
  small: 100,
  connections: 32,
  sweeps: 3,
  slice: 3,
  warmup: 2,
  binds: 1000,
  "bind-connections": 1,
  "phase-seconds": 20,
  scrapes: 3,
  starts: 3,
  "fill-concurrency": 256,
  "quiet-wait": 5,
} as const;

function readSettings(argv: string[]): Settings | undefined {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...(Object.fromEntries(Object.keys(NUMBERS).map((name) => [name, { type: "string" }])) as Record<keyof typeof NUMBERS, { type: "string" }>),
      servers: { type: "string" },
      help: { type: "boolean" },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return undefined;
  }
  const number = (name: keyof typeof NUMBERS, minimum: number) => {
    const given = values[name];
    if (given === undefined) return NUMBERS[name];
    const value = Number(given);
    if (!Number.isFinite(value) || value < minimum) throw new Error(`--${name} must be a number of at least ${minimum}, got "${String(given)}".`);
    return value;
  };
  const wholeNumber = (name: keyof typeof NUMBERS, minimum: number) => {
    const value = number(name, minimum);
    if (!Number.isInteger(value)) throw new Error(`--${name} must be a whole number, got "${String(values[name])}".`);
    return value;
  };
  const servers = (values.servers ?? SERVER_IDS.join(",")).split(",").map((id) => id.trim());
  for (const id of servers) {
    if (!(SERVER_IDS as readonly string[]).includes(id)) throw new Error(`--servers: unknown server "${id}". Known: ${SERVER_IDS.join(", ")}.`);
  }
  const settings: Settings = {
    instances: wholeNumber("instances", 1),
    bindings: wholeNumber("bindings", 0),
    apps: wholeNumber("apps", 1),
    small: wholeNumber("small", 1),
    servers: servers as ServerId[],
    connections: wholeNumber("connections", 1),
    sweeps: wholeNumber("sweeps", 1),
    slice: number("slice", 0.5),
    warmup: number("warmup", 0),
    binds: wholeNumber("binds", 1),
    bindConnections: wholeNumber("bind-connections", 1),
    phaseSeconds: number("phase-seconds", 1),
    scrapes: wholeNumber("scrapes", 1),
    starts: wholeNumber("starts", 1),
    fillConcurrency: wholeNumber("fill-concurrency", 1),
    quietWait: number("quiet-wait", 0),
  };
  if (settings.small > settings.instances) throw new Error(`--small (${settings.small}) must not exceed --instances (${settings.instances}).`);
  if (settings.binds < settings.bindConnections) throw new Error("--binds must be at least --bind-connections.");
  return settings;
}


/** Seconds `work` took. */
async function timed(work: () => Promise<unknown>): Promise<number> {
  const startedAt = performance.now();
  await work();
  return (performance.now() - startedAt) / 1000;
}

/** `work(0)` … `work(count - 1)`, at most `concurrency` at a time. */
async function inParallel(count: number, concurrency: number, work: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await work(next++);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
}

// ---------------------------------------------------------------------------
// Redis servers and the servers under test.

async function startRedis(label: string): Promise<Member["redis"]> {
  const redis = await startBenchRedis(`scale-${label}`);
  return { ...redis, watch: new RedisWatch(redis.client) };
}

function startMemberServer(member: Member, cpu: number | undefined): Promise<RunningServer> {
  return startServer(member.spec, { cpu, env: { BENCH_REDIS_URL: member.redis.url }, stdoutFile: join(member.redis.dir, "server.log") });
}

// ---------------------------------------------------------------------------
// Filling.

const fillApp = (index: number) => `scale-app-${index}`;
/** How long a fill write waits for its instance lock: the fill's writes queue on it. */
const FILL_LOCK_WAIT_MS = 120_000;

/** Instances `scale-<i>` (ready) and app bindings spread over them, through the store's own API. */
async function fillRegistry(member: Member, instances: number, bindings: number, concurrency: number): Promise<Fill> {
  const store = new RedisStore({ url: member.redis.url });
  const time = new Date().toISOString();
  const name = (index: number) => `scale-${index}`;
  try {
    await store.getInstance(name(0)); // connected before the burst: each call waiting for the connection adds a listener
    const instanceSeconds = await timed(() =>
      inParallel(instances, concurrency, async (index) => {
        const record: InstanceRecord = { name: name(index), plan: "default", team: "bench-team", tags: [], parameters: {}, state: "ready", data: {}, createdAt: time, updatedAt: time };
        await store.withLock(record.name, FILL_LOCK_WAIT_MS, async (held) => {
          if (held.record) throw new Error(`Bulk load: instance "${record.name}" exists already.`);
          await held.saveInstance(record);
        });
      }),
    );
    const bindingSeconds = await timed(() =>
      inParallel(bindings, concurrency, (index) => {
        const app = fillApp(index);
        const instance = name(index % instances);
        return store.withLock(instance, FILL_LOCK_WAIT_MS, (held) =>
          held.saveBinding({ instance, kind: "app", key: app, appName: app, appHost: `${app}.apps.example.com`, createdAt: time, updatedAt: time }),
        );
      }),
    );
    const { usedMemoryBytes } = await member.redis.watch.read();
    return {
      member,
      text:
        `${instances} instances in ${instanceSeconds.toFixed(1)} s (${Math.round(instances / instanceSeconds)}/s), ` +
        `${bindings} bindings in ${bindingSeconds.toFixed(1)} s (${Math.round(bindings / bindingSeconds)}/s), ` +
        `each through RedisStore.withLock, ${concurrency} in flight; Redis then used ${(usedMemoryBytes / 2 ** 20).toFixed(0)} MiB`,
    };
  } finally {
    await store.close();
  }
}

/**
 * Binds `apps` apps to the example's shared instance (that many ACL users on its Redis server)
 * through its shared plan's bind handler and its ACL journal, as the example runs them, and the
 * registry's record of each: the same state as that many bind-app calls, in far less time.
 */
async function fillSharedInstance(member: Member, apps: number, concurrency: number): Promise<Fill> {
  const admin = member.redis.client;
  const store = new RedisStore({ client: admin, keyPrefix: REGISTRY_KEY_PREFIX });
  const record = await store.getInstance(INSTANCE);
  if (!record) throw new Error(`${member.label}: ${INSTANCE} is not in the example's registry.`);
  const { host, port } = member.redis.address;
  const checker = await credentialChecker(member.redis.address);
  // Journaled as the example does (its ACL file saved every 500 changes), the last save at the end.
  const users = new AclJournal({ admin, registry: admin, key: ACL_JOURNAL_KEY, store, saveIntervalMs: 3_600_000, log: pino({ level: "silent" }) });
  const plan = sharedPlan({ admin, users, checker, host, port });
  const time = new Date().toISOString();
  const bindSeconds = await timed(() =>
    inParallel(apps, concurrency, async (index) => {
      const app = fillApp(index);
      await plan.bind(record, { kind: "app", key: app });
      await store.withLock(INSTANCE, FILL_LOCK_WAIT_MS, (held) =>
        held.saveBinding({ instance: INSTANCE, kind: "app", key: app, appName: app, appHost: `${app}.apps.example.com`, createdAt: time, updatedAt: time }),
      );
    }),
  ).finally(() => checker.close());
  const userCount = (await admin.aclUsers()).length;
  const saveSeconds = await timed(() => users.close());
  return {
    member,
    text:
      `${apps} apps bound to ${INSTANCE} (shared) in ${bindSeconds.toFixed(1)} s (${Math.round(apps / bindSeconds)}/s), through the shared plan's bind ` +
      `handler and a binding saved under the instance lock, ${concurrency} in flight, users journaled; then the last ACL SAVE (of ${userCount} users) and journal trim: ${(saveSeconds * 1000).toFixed(0)} ms`,
  };
}

// ---------------------------------------------------------------------------
// Measuring.

/** Redis's counters before and after `work`, and the CPU the server and its Redis used meanwhile. */
async function observe(member: Member, operation: Operation, work: (latencies: number[]) => Promise<{ operations: number; seconds: number }>): Promise<Phase> {
  const before = await member.redis.watch.read();
  const latencies: number[] = [];
  const [{ operations, seconds }, cpu] = await withCpuShare([member.running!.pid, member.redis.pid], () => work(latencies));
  const after = await member.redis.watch.read();
  return { member, operation, latencies, operations, seconds, cpuSeconds: cpu?.serverSeconds, others: cpu?.others, redis: workBetween(before, after, operations) };
}

/** Loads a server with `call`, one amount after another until `next` gives none. */
function loadCalls(member: Member, call: CallName, connections: number, next: (done: { requests: number; seconds: number }) => Amount | undefined): Promise<Phase> {
  return observe(member, call, async (latencies) => {
    const done = { requests: 0, seconds: 0 };
    for (let amount = next(done); amount !== undefined; amount = next(done)) {
      let busyMs = 0;
      const measurement = await load(member.running!.baseUrl, CALLS[call], amount, connections, {
        // A call queued behind a slow one (an ACL SAVE of thousands of users) is slow, not broken.
        timeoutSeconds: 120,
        onLatency: (ms) => {
          latencies.push(ms);
          busyMs += ms;
        },
      });
      const broken = brokenBecause(measurement);
      if (broken) throw new Error(`${member.label}, ${call}: ${broken}.`);
      done.requests += measurement.requests;
      // autocannon ends a run of so many requests at its next one-second tick, so its duration is
      // no measure of a short run; with every connection always busy, time = Σ latency ÷ connections.
      done.seconds += "seconds" in amount ? measurement.requests / measurement.requestsPerSecond : busyMs / 1000 / connections;
    }
    return { operations: done.requests, seconds: done.seconds };
  });
}

/**
 * bind-app of new apps (as many as fit in `seconds`, at most `binds`), then unbind-app of the
 * same apps; apps are numbered from `first`.
 */
async function bindAndUnbind(member: Member, settings: Settings, share: { binds: number; seconds: number; first: number }): Promise<Phase[]> {
  const app = (index: number) => `scale-bench-${share.first + index}`;
  const connections = settings.bindConnections;
  const bind = await loadCalls(member, "bind-app", connections, ({ requests, seconds }) => {
    // A first part of two calls per connection tells how many more fit in the time given.
    const wanted = requests === 0 ? 2 * connections : Math.floor(((share.seconds - seconds) * requests) / seconds);
    const count = Math.min(wanted, share.binds - requests);
    return count < connections ? undefined : { requests: count, body: (index) => bindAppForm(app(requests + index)) };
  });
  const unbind = await loadCalls(member, "unbind-app", connections, ({ requests }) =>
    requests > 0 ? undefined : { requests: bind.operations, body: (index) => unbindAppForm(app(index)) },
  );
  progress(`${member.label}: bind-app ${bind.operations} apps at ${Math.round(bind.operations / bind.seconds)} req/s, unbind-app ${Math.round(unbind.operations / unbind.seconds)} req/s`);
  await member.redis.watch.untilIdle();
  return [bind, unbind];
}

/** `GET /metrics`, `scrapes` times one after another. */
async function scrapeMetrics(member: Member, scrapes: number): Promise<Phase> {
  const counted: string[] = [];
  const phase = await observe(member, "metrics", async (latencies) => {
    const startedAt = performance.now();
    for (let scrape = 0; scrape < scrapes; scrape++) {
      const sentAt = performance.now();
      const response = await fetch(`${member.running!.baseUrl}/metrics`, { headers: { authorization: CALLS.status.headers.authorization! } });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`${member.label}: GET /metrics answered ${response.status}: ${text.slice(0, 200)}`);
      latencies.push(performance.now() - sentAt);
      counted.push(instancesCounted(text));
    }
    const seconds = (performance.now() - startedAt) / 1000;
    // A store operation that timed out goes on in Redis after the answer: count it in.
    await member.redis.watch.untilIdle();
    return { operations: scrapes, seconds };
  });
  return { ...phase, detail: counted.join(", ") };
}

/** The instances the `provider_instances` gauge counts in a scrape, or why there are none. */
function instancesCounted(metrics: string): string {
  const series = [...metrics.matchAll(/^provider_instances\{[^}]*\} (\d+)/gm)];
  if (series.length === 0) return "no series (census failed or timed out)";
  return String(series.reduce((sum, [, count]) => sum + Number(count), 0));
}

/**
 * Starts the (stopped) server `starts` times on its registry, each time from process
 * start to its first answer (a status read from the registry, answered 204), then waits for its
 * Redis to go idle: work a server starts in the background (the example's adoption of every
 * user) counts as its start-up's. Then one start more, sending status calls one after another
 * until its Redis is idle: the slowest shows what that background work does to the calls.
 */
async function startUps(member: Member, starts: number, cpu: number | undefined, commandsPerStatus: number): Promise<Phase> {
  const watch = member.redis.watch;
  const before = await watch.read();
  const latencies: number[] = [];
  const idleAfterMs: number[] = [];
  const rss: number[] = [];
  for (let start = 0; start < starts; start++) {
    const startedAt = performance.now();
    member.running = await startMemberServer(member, cpu);
    latencies.push(performance.now() - startedAt);
    rss.push(rssMiB(member.running.pid) ?? Number.NaN);
    idleAfterMs.push(latencies.at(-1)! + (await watch.untilIdle()));
    progress(`  ${member.label}: first answer after ${latencies.at(-1)!.toFixed(0)} ms, Redis idle after ${(idleAfterMs.at(-1)! / 1000).toFixed(1)} s`);
    await member.running.stop();
  }
  const after = await watch.read();

  member.running = await startMemberServer(member, cpu);
  const baseUrl = member.running.baseUrl;
  const probe = { calls: 0, slowestMs: 0, failed: 0, firstFailure: "" };
  let idle = false;
  // An answer other than 204 here is a finding (what the start-up's work does to the calls), not a broken run.
  const probing = (async () => {
    while (!idle) {
      const sentAt = performance.now();
      const answer = await fetch(baseUrl + CALLS.status.path, { headers: CALLS.status.headers }).then(
        async (response) => ({ status: response.status, text: await response.text() }),
        (error: unknown) => ({ status: 0, text: String(error) }),
      );
      probe.calls++;
      probe.slowestMs = Math.max(probe.slowestMs, performance.now() - sentAt);
      if (answer.status !== 204 && probe.failed++ === 0) probe.firstFailure = `${answer.status} ${answer.text.slice(0, 120)}`;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    // The probes' own commands are not the server's background work (one may be in flight at a reading).
    await watch.untilIdle({ ownCommands: () => probe.calls * commandsPerStatus, idleCommands: 2 + commandsPerStatus });
  } finally {
    idle = true;
    await probing;
  }
  await member.running.stop();
  member.running = undefined;
  const failures = probe.failed === 0 ? "" : `; ${probe.failed} answered otherwise, first: ${probe.firstFailure}`;
  progress(`  ${member.label}: slowest of ${probe.calls} status calls while starting: ${probe.slowestMs.toFixed(0)} ms${failures}`);
  const statusWhileStarting = `${ms(probe.slowestMs)}${probe.failed === 0 ? "" : ` (${probe.failed} of ${probe.calls} not 204: ${probe.firstFailure})`}`;
  return { member, operation: "start-up", latencies, operations: starts, seconds: 0, redis: workBetween(before, after, starts), idleAfterMs, rss, detail: statusWhileStarting };
}

async function quiet(members: Member[], settings: Settings): Promise<void> {
  const own = members.flatMap((member) => [member.running?.pid ?? -1, member.redis.pid]);
  await waitForQuiet(own, settings.quietWait);
}

/** Starts every member's Redis, fills its registry and starts its server. */
async function setUp(members: Member[], settings: Settings, cpu: number | undefined): Promise<Fill[]> {
  for (const id of settings.servers) {
    const spec = REDIS_SERVERS.find((server) => server.id === id)!;
    for (const size of SIZES) members.push({ id, size, label: `${id} (${size})`, spec, redis: await startRedis(`${id}-${size}`) });
  }
  const fills: Fill[] = [];
  for (const member of members) {
    if (member.id === "provider-redis-store") {
      const instances = member.size === "large" ? settings.instances : settings.small;
      const bindings = Math.round((settings.bindings * instances) / settings.instances);
      progress(`filling ${member.label}: ${instances} instances, ${bindings} bindings`);
      fills.push(await fillRegistry(member, instances, bindings, settings.fillConcurrency));
    }
    member.running = await startMemberServer(member, cpu);
    if (member.id === "example") {
      const apps = member.size === "large" ? settings.apps : settings.small;
      progress(`filling ${member.label}: ${apps} bound apps`);
      fills.push(await fillSharedInstance(member, apps, settings.fillConcurrency));
    }
    progress(`  ${fills.at(-1)!.text}`);
    await member.redis.watch.untilIdle();
  }
  return fills;
}

/** Status in sweeps, each member of a pair back to back, the order alternating. */
async function measureStatus(members: Member[], pairs: Member[][], settings: Settings): Promise<Phase[]> {
  for (const member of members) {
    await verifyAnswer(member.label, member.running!.baseUrl, CALLS.status);
    if (settings.warmup > 0) await load(member.running!.baseUrl, CALLS.status, { seconds: settings.warmup }, settings.connections);
  }
  const phases: Phase[] = [];
  for (let sweep = 0; sweep < settings.sweeps; sweep++) {
    await quiet(members, settings);
    const measured: Phase[] = [];
    for (const pair of pairs) {
      for (const member of sweep % 2 === 0 ? pair : [...pair].reverse()) {
        measured.push(await loadCalls(member, "status", settings.connections, ({ requests }) => (requests > 0 ? undefined : { seconds: settings.slice })));
      }
    }
    phases.push(...measured);
    progress(`status sweep ${sweep + 1}: ${measured.map((p) => `${p.member.label} ${Math.round(p.operations / p.seconds)}`).join(", ")} req/s`);
  }
  return phases;
}

async function main(): Promise<number> {
  const settings = readSettings(process.argv.slice(2));
  if (!settings) return 0;
  const cpus = pinCpus(true);
  progress(`cpus: ${cpus.note}`);
  progress("compiling the framework (its dist/) and the servers (tsc -p bench/tsconfig.servers.json)");
  compileServers();
  const startedAt = performance.now();
  const members: Member[] = [];
  const phases: Phase[] = [];
  const rss = new Map<Member, RssAfterLoad>();
  let fills: Fill[];
  let stopped: PromiseSettledResult<void>[];
  try {
    fills = await setUp(members, settings, cpus.server);
    const pairs = settings.servers.map((id) => members.filter((member) => member.id === id));
    phases.push(...(await measureStatus(members, pairs, settings)));
    // In two halves, large small small large: a change in the machine's load hits both sizes alike.
    for (const [large, small] of pairs) {
      const half = (first: number) => ({ binds: Math.ceil(settings.binds / 2), seconds: settings.phaseSeconds / 2, first });
      for (const [member, first] of [[large!, 0], [small!, 0], [small!, settings.binds], [large!, settings.binds]] as const) {
        await quiet(members, settings);
        phases.push(...(await bindAndUnbind(member, settings, half(first))));
      }
    }
    for (const member of members) rss.set(member, { afterCalls: rssMiB(member.running!.pid) });
    for (const member of members) {
      phases.push(await scrapeMetrics(member, settings.scrapes));
      progress(`${member.label}: GET /metrics ${phases.at(-1)!.latencies.map((ms) => ms.toFixed(0)).join(", ")} ms`);
    }
    for (const member of members) rss.get(member)!.afterScrapes = rssMiB(member.running!.pid);
    // Starts are timed with none of the other servers running: an idle server's garbage collection after the load would compete.
    for (const member of members) {
      await member.running!.stop();
      member.running = undefined;
    }
    for (const member of members) {
      progress(`${member.label}: ${settings.starts} starts`);
      const status = phases.filter((phase) => phase.member === member && phase.operation === "status");
      const commandsPerStatus = Math.round(status.reduce((sum, phase) => sum + phase.redis.commands, 0) / status.length);
      phases.push(await startUps(member, settings.starts, cpus.server, commandsPerStatus));
    }
  } finally {
    // Everything is stopped even when one server died; that death then breaks the run.
    stopped = await Promise.allSettled(
      members.map(async (member) => {
        try {
          await member.running?.stop();
        } finally {
          await member.redis.stop();
        }
      }),
    );
  }
  const failed = stopped.find((result) => result.status === "rejected");
  if (failed) throw failed.reason;
  const minutes = (performance.now() - startedAt) / 60_000;
  const facts = [
    ...machineFacts(),
    `cpus: ${cpus.note}; each redis-server unpinned`,
    `settings: ${process.argv.slice(2).join(" ") || "defaults"} (npm run bench:scale -- --help); the run took ${minutes.toFixed(1)} min after compiling`,
  ];
  console.log(["", ...facts, "", ...formatScaleReport({ sizes: settings, fills, phases, rss }), ""].join("\n"));
  return 0;
}

runHarness(main);
