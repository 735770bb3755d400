/**
 * The registry survives the loss of its Redis primary: a Sentinel group (primary, replica, three
 * sentinels), two provider processes under a steady stream of binds, the primary killed with
 * SIGKILL. Every call answers 201 or a clear 503, none hangs, and every binding answered 201 is
 * still in the registry once the replica has taken over.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RedisStore } from "../src/index.js";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { startSentinelGroup, type SentinelGroup } from "../../../test/support/redis-sentinel.js";
import { eventually, type Served } from "./helpers.js";
import { useReplicaProcesses } from "./replica-processes.js";

/**
 * The provider processes' lock timeout. A call waits at most this long for its instance lock,
 * then its write ends within the store's commandTimeoutMs (default 5 s) and its wait for the
 * replica within replicaTimeoutMs (default 1 s, the same pipeline): a call still unanswered after
 * all three, with 10 s for a loaded CI runner's scheduling (a call took over 15 s there), has hung.
 */
const LOCK_TIMEOUT_MS = 10_000;
const HANG_MS = LOCK_TIMEOUT_MS + 5_000 + 1_000 + 10_000;
/** Binds answered 201 wanted before the kill, and after the group is whole again. */
const SUCCESSES_PER_PHASE = 20;
const STREAM_INTERVAL_MS = 50;

/** Every 503 a caller may see while the store fails over, each telling them to try again. */
const CLEAR_503 = [
  "The provider cannot reach its state store (Redis) right now; try again in a moment.",
  /^The provider's state store \(Redis\) confirmed the write on \d+ of 1 replicas in time; try again in a moment\.$/,
  /^Another operation on instance "[^"]+" is still running; try again in a moment\.$/,
  /^The lock on instance "[^"]+" was lost before this call's change was saved .* Try again in a moment\.$/,
];

interface Outcome {
  instance: string;
  app: string;
  status: number | "hung";
  body: string;
  startedAt: number;
  ms: number;
}

/** Gives up on a promise after `ms` (resolving undefined), without keeping a timer behind. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

describe("the registry on a Redis Sentinel group", { timeout: 180_000 }, () => {
  let group: SentinelGroup;
  let restarted: RedisServer | undefined;
  const replicas = useReplicaProcesses();
  let opened: RedisStore[] = [];
  const open = (options: { keyPrefix: string; waitForReplicas?: number }) => {
    const store = new RedisStore({ sentinel: group.address, ...options });
    opened.push(store);
    return store;
  };

  beforeAll(async () => {
    group = await startSentinelGroup();
  }, 60_000);
  afterEach(async () => {
    await Promise.all(opened.map((store) => store.close()));
    opened = [];
  });
  afterAll(async () => {
    await restarted?.stop();
    await group?.stop();
  });

  it("with waitForReplicas, a write succeeds once the replica has it, and fails with a clear 503 when too few replicas confirm", async () => {
    const store = open({ keyPrefix: "wait:", waitForReplicas: 1 });
    const at = "2026-01-01T00:00:00.000Z";
    await store.withLock("cache", 5_000, (held) => held.saveBinding({ instance: "cache", kind: "app", key: "web", appName: "web", createdAt: at, updatedAt: at }));
    const replica = new RedisStore({ url: group.replica.url, keyPrefix: "wait:" });
    opened.push(replica);
    expect((await replica.listBindings("cache")).map((binding) => binding.key)).toEqual(["web"]);

    const greedy = open({ keyPrefix: "wait:", waitForReplicas: 2 });
    const error = (await greedy
      .withLock("cache", 5_000, (held) => held.deleteBinding({ kind: "app", key: "web" }))
      .catch((caught: unknown) => caught)) as Error & { status?: number };
    expect([error.status, error.message]).toEqual([
      503,
      "The provider's state store (Redis) confirmed the write on 1 of 2 replicas in time; try again in a moment.",
    ]);
  });

  it("answers 503, not 500, when the server it writes to is a replica (a primary demoted under it)", async () => {
    for (const waitForReplicas of [0, 1]) {
      const demoted = new RedisStore({ url: group.replica.url, keyPrefix: "demoted:", waitForReplicas });
      opened.push(demoted);
      const error = (await demoted
        .withLock("cache", 5_000, (held) => held.deleteInstance())
        .catch((caught: unknown) => caught)) as Error & { status?: number };
      expect([error.status, error.message]).toEqual([503, "The provider cannot reach its state store (Redis) right now; try again in a moment."]);
      expect(String((error.cause as Error).message)).toMatch(/READONLY|commands failed/);
    }
    expect(() => new RedisStore({ sentinel: group.address, waitForReplicas: 0.5 })).toThrow(/waitForReplicas must be a whole number/);
  });

  it("two providers under a stream of binds lose no acknowledged binding when the primary is killed", async () => {
    const keyPrefix = "failover:";
    const env = {
      SENTINELS: group.address.sentinels.map((node) => `${node.host}:${node.port}`).join(","),
      SENTINEL_NAME: group.address.name,
      KEY_PREFIX: keyPrefix,
      WAIT_FOR_REPLICAS: "1",
      LOCK_TIMEOUT_MS: String(LOCK_TIMEOUT_MS),
    };
    const [a, b] = await Promise.all([replicas.start("a", env), replicas.start("b", env)]);
    const instances = ["cache-0", "cache-1", "cache-2", "cache-3"];
    for (const name of instances) expect((await a.call("POST", "/resources", { name })).status).toBe(201);
    for (const name of instances) {
      await eventually(async () => ((await b.call("GET", `/resources/${name}/status`)).status === 204 ? true : undefined), 30_000);
    }

    // A steady stream: a bind every STREAM_INTERVAL_MS whatever the answers, round the instances,
    // each on the other provider than the last.
    const outcomes: Outcome[] = [];
    const calls: Array<Promise<void>> = [];
    const bind = async (n: number) => {
      const instance = instances[n % instances.length]!;
      const provider: Served = n % 2 === 0 ? a : b;
      const app = `app-${n}`;
      const startedAt = Date.now();
      const form = { "app-name": app, "app-host": `${app}.example.com` };
      const answer = await within(provider.call("POST", `/resources/${instance}/bind-app`, form), HANG_MS);
      outcomes.push({ instance, app, status: answer?.status ?? "hung", body: answer?.body ?? "", startedAt, ms: Date.now() - startedAt });
    };
    let sent = 0;
    const stream = setInterval(() => calls.push(bind(sent++)), STREAM_INTERVAL_MS);
    const successes = () => outcomes.filter((outcome) => outcome.status === 201).length;

    // When each phase began: the kill, the replica's promotion, the old primary's return.
    const phases = { killed: Infinity, promoted: Infinity, back: Infinity };
    try {
      await eventually(() => (successes() >= SUCCESSES_PER_PHASE ? true : undefined), 30_000);
      process.kill(group.primary.pid, "SIGKILL");
      phases.killed = Date.now();
      await eventually(async () => ((await group.primaryPort()) === group.replica.port ? true : undefined), 60_000);
      phases.promoted = Date.now();
      // Writes with no replica to confirm them, until one has been refused for that; then the old
      // primary comes back, empty, the sentinels make it a replica of the new one, and writes can
      // be confirmed again.
      const refusedForWantOfReplica = (outcome: Outcome) =>
        outcome.startedAt + outcome.ms >= phases.promoted && outcome.body.includes("confirmed the write on 0 of 1 replicas");
      await eventually(() => outcomes.some(refusedForWantOfReplica), 30_000);
      restarted = await startRedisServer({ port: group.primary.port });
      phases.back = Date.now();
      const before = successes();
      await eventually(() => (successes() >= before + SUCCESSES_PER_PHASE ? true : undefined), 60_000);
    } finally {
      clearInterval(stream);
      await Promise.all(calls);
    }

    const report = (label: string, from: number, to: number) => {
      const sent = outcomes.filter((outcome) => outcome.startedAt >= from && outcome.startedAt < to);
      const count = (status: Outcome["status"]) => sent.filter((outcome) => outcome.status === status).length;
      const slowest = Math.max(0, ...sent.map((outcome) => outcome.ms));
      // The 503s by message, instance names and counts left out: "cannot reach", "confirmed"...
      const reasons = new Map<string, number>();
      for (const { status, body } of sent) {
        const reason = body.replace(/"[^"]*"|\d+/g, "…").slice(0, 40);
        if (status === 503) reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
      }
      const why = [...reasons].map(([reason, n]) => `${n} × "${reason}..."`).join(", ");
      return `${label}: ${sent.length} binds, ${count(201)} × 201, ${count(503)} × 503 (${why}), slowest ${slowest} ms`;
    };
    console.info(
      [
        report("before the kill", 0, phases.killed),
        report("kill → replica promoted", phases.killed, phases.promoted),
        report("promoted, no replica yet", phases.promoted, phases.back),
        report("old primary back as replica", phases.back, Infinity),
      ].join("\n"),
    );
    const unclear = outcomes.filter(
      (outcome) => outcome.status !== 201 && !(outcome.status === 503 && CLEAR_503.some((message) => matches(message, outcome.body))),
    );
    expect(unclear).toEqual([]);
    expect(outcomes.some((outcome) => outcome.startedAt >= phases.back && outcome.status === 201)).toBe(true);

    const registry = open({ keyPrefix });
    const recorded = new Set<string>();
    for (const instance of instances) {
      for (const binding of await registry.listBindings(instance)) recorded.add(binding.key);
    }
    const lost = outcomes.filter((outcome) => outcome.status === 201 && !recorded.has(outcome.app)).map((outcome) => outcome.app);
    expect(lost).toEqual([]);
  });
});

function matches(expected: string | RegExp, body: string): boolean {
  return typeof expected === "string" ? body === expected : expected.test(body);
}
