/**
 * Two provider processes sharing one Redis store behave as one service: what one creates the
 * other reports and binds, a background step runs on exactly one of them, when the process
 * running a step dies the other finishes it, and a busy replica does not starve the other of
 * an instance's lock.
 */
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RedisStore } from "../src/index.js";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { eventually } from "./helpers.js";
import { stopProcess, useReplicaProcesses } from "./replica-processes.js";

// Each test starts real Node processes: give a loaded CI machine room.
const PROCESS_TEST_TIMEOUT_MS = 90_000;
const WAIT_MS = 45_000;

describe("two provider processes on one Redis store", { timeout: PROCESS_TEST_TIMEOUT_MS }, () => {
  let redis: RedisServer;
  const replicas = useReplicaProcesses();
  let prefixes = 0;

  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis.stop();
  });

  const startReplica = (name: string, keyPrefix: string, hangOn = "", env: Record<string, string> = {}) =>
    replicas.start(name, { REDIS_URL: redis.url, KEY_PREFIX: keyPrefix, HANG_ON: hangOn, ...env });

  async function runsOf(keyPrefix: string, instance: string): Promise<number> {
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      return Number(await client.get(`${keyPrefix}provision-runs:${instance}`));
    } finally {
      await client.close();
    }
  }

  const app = (name: string) => ({ "app-name": name, "app-host": `${name}.example.com` });

  it("create on one, status and bind on the other; the provision step runs exactly once", async () => {
    const keyPrefix = `replicas${++prefixes}:`;
    const [a, b] = await Promise.all([startReplica("a", keyPrefix), startReplica("b", keyPrefix)]);

    expect((await a.call("POST", "/resources", { name: "cache" })).status).toBe(201);
    expect([202, 204]).toContain((await b.call("GET", "/resources/cache/status")).status);
    await eventually(async () => ((await b.call("GET", "/resources/cache/status")).status === 204 ? true : undefined), WAIT_MS);

    const bound = await b.call("POST", "/resources/cache/bind-app", app("web"));
    expect(bound.status).toBe(201);
    expect(JSON.parse(bound.body)).toMatchObject({ SERVED_BY: "b" });
    expect(await runsOf(keyPrefix, "cache")).toBe(1);
    // And it can never run again: no step is left pending for either replica's scan to find.
    const store = new RedisStore({ url: redis.url, keyPrefix });
    try {
      expect(await store.listPendingSteps()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it("concurrent creates of one name on both: one 201, one 409; concurrent binds on both: all recorded", async () => {
    const keyPrefix = `replicas${++prefixes}:`;
    const [a, b] = await Promise.all([startReplica("a", keyPrefix), startReplica("b", keyPrefix)]);

    for (let round = 0; round < 5; round++) {
      const name = `race-${round}`;
      const answers = await Promise.all([a.call("POST", "/resources", { name }), b.call("POST", "/resources", { name })]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    }

    await eventually(async () => ((await a.call("GET", "/resources/race-0/status")).status === 204 ? true : undefined), WAIT_MS);
    const apps = Array.from({ length: 20 }, (_, i) => `app-${i}`);
    const answers = await Promise.all(
      apps.map((name, i) => (i % 2 === 0 ? a : b).call("POST", "/resources/race-0/bind-app", app(name))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(apps.map(() => 201));
    const store = new RedisStore({ url: redis.url, keyPrefix });
    try {
      expect((await store.listBindings("race-0")).map((binding) => binding.key).sort()).toEqual([...apps].sort());
    } finally {
      await store.close();
    }
  });

  it("when the process running a step dies, the other one takes it over and finishes it", async () => {
    const keyPrefix = `replicas${++prefixes}:`;
    const a = await startReplica("a", keyPrefix, "slow");
    expect((await a.call("POST", "/resources", { name: "slow" })).status).toBe(201);
    await eventually(async () => ((await runsOf(keyPrefix, "slow")) === 1 ? true : undefined), WAIT_MS);
    await stopProcess(a.process, "SIGKILL"); // dies mid-step, holding the lease

    const b = await startReplica("b", keyPrefix);
    await eventually(async () => ((await b.call("GET", "/resources/slow/status")).status === 204 ? true : undefined), WAIT_MS);
    const bound = await b.call("POST", "/resources/slow/bind-app", app("web"));
    expect(JSON.parse(bound.body)).toEqual({ SERVED_BY: "b", PROVISIONED_BY: "b" });
    expect(await runsOf(keyPrefix, "slow")).toBe(2);
    const store = new RedisStore({ url: redis.url, keyPrefix });
    try {
      expect((await store.getInstance("slow"))?.data).toMatchObject({ provisionedBy: "b", attempt: 2 });
    } finally {
      await store.close();
    }
  });

  it("one replica busy on an instance, the other's calls on it are served too, not answered 503", async () => {
    const keyPrefix = `replicas${++prefixes}:`;
    // Each bind holds the instance's lock a while, so the busy replica always has callers waiting for it.
    const env = { BIND_MS: "200", LOCK_TIMEOUT_MS: "4000" };
    const [busy, other] = await Promise.all([startReplica("busy", keyPrefix, "", env), startReplica("other", keyPrefix, "", env)]);
    expect((await busy.call("POST", "/resources", { name: "shared" })).status).toBe(201);
    await eventually(async () => ((await busy.call("GET", "/resources/shared/status")).status === 204 ? true : undefined), WAIT_MS);

    // The busy replica: 3 callers binding back to back until the other replica is done.
    let otherDone = false;
    let busyCalls = 0;
    const busyStatuses: number[] = [];
    const load = Promise.all(
      Array.from({ length: 3 }, async () => {
        while (!otherDone) busyStatuses.push((await busy.call("POST", "/resources/shared/bind-app", app(`busy-${busyCalls++}`))).status);
      }),
    );

    // The other replica: one call at a time, each once the busy replica has served two more
    // (so each one arrives while the lock passes from one busy caller to the next).
    const otherStatuses: number[] = [];
    for (let call = 0; call < 8; call++) {
      const served = busyStatuses.length + 2;
      await eventually(() => busyStatuses.length >= served, WAIT_MS);
      otherStatuses.push((await other.call("POST", "/resources/shared/bind-app", app(`other-${call}`))).status);
    }
    otherDone = true;
    await load;

    expect(otherStatuses).toEqual(otherStatuses.map(() => 201));
    expect(busyStatuses).toEqual(busyStatuses.map(() => 201));
  });
});
