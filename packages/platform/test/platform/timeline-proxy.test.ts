/**
 * The call timeline and the proxy under attack (issue 30's second pass): the proxy's bounds
 * (calls in flight, a caller that goes, its time limit); what it relays (statuses, encodings,
 * bytes); its reserved paths; who sees a proxied call; and the secrets kept out of the timeline.
 * (A flood of large calls against the platform's process: timeline-flood.test.ts.)
 */
import { gzipSync } from "node:zlib";
import { stringify } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePool, type Cluster } from "../../src/platform/domain/config.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { MemoryPlatformStore } from "../../src/platform/store/memory.js";
import { RedisPlatformStore } from "../../src/platform/store/redis.js";
import type { PlatformStore } from "../../src/platform/store/store.js";
import { addressOfUrl, redisClient } from "@provider-kit/redis-store/connection";
import { eventually } from "../../../../test/support/eventually.js";
import { startRedisServer, type RedisServer } from "../../../../test/support/redis-server.js";
import { Api, manifest, startTestPlatform, type TestPlatform } from "./helpers.js";
import { ok, rawProvider } from "./raw-provider.js";

describe.each(["memory", "redis"] as const)("the timeline's store (%s)", (kind) => {
  let redis: RedisServer | undefined;
  let store: PlatformStore;
  beforeAll(async () => {
    if (kind === "memory") {
      store = new MemoryPlatformStore();
      return;
    }
    redis = await startRedisServer();
    const client = redisClient(addressOfUrl(redis.url));
    await client.connect();
    store = new RedisPlatformStore(client, "timeline-test");
  });
  afterAll(async () => {
    await store.close();
    await redis?.stop();
  });

  const call = (id: number, size: number): ProviderCall => ({
    id,
    at: "2026-01-01T00:00:00.000Z",
    service: "kv",
    method: "GET",
    path: "/",
    url: "http://provider",
    requestHeaders: {},
    requestBody: "y".repeat(size),
    durationMs: 1,
    curl: "curl",
  });
  const bytesOf = (item: ProviderCall) => JSON.stringify(item).length;

  it("drops the oldest calls past the count or the bytes, and reads only the calls asked for", async () => {
    await store.clearCalls();
    for (let id = 1; id <= 30; id++) await store.appendCall({ id, service: "kv" }, call(id, 100), { calls: 20, bytes: 1 << 20 });
    expect((await store.callEntries()).map((entry) => entry.id)).toEqual(Array.from({ length: 20 }, (_, index) => index + 11));
    // By bytes: three large calls fit, the fourth pushes the first out.
    const large = bytesOf(call(31, 1000));
    for (let id = 31; id <= 34; id++) await store.appendCall({ id, service: "kv" }, call(id, 1000), { calls: 100, bytes: 3 * large + 400 });
    const kept = (await store.callEntries()).map((entry) => entry.id);
    expect(kept.slice(-3)).toEqual([32, 33, 34]);
    expect(kept).not.toContain(31);
    expect((await store.calls([34, 31, 33])).map((item) => item.id)).toEqual([34, 33]);
    await store.clearCalls();
    expect([await store.callEntries(), await store.calls([34])]).toEqual([[], []]);
  });
});

describe("the proxy's bounds", () => {
  let t: TestPlatform;
  let hold!: Promise<void>;
  let release!: () => void;
  let provider: Awaited<ReturnType<typeof rawProvider>>;
  let slowDone = 0;
  beforeAll(async () => {
    hold = new Promise((resolve) => (release = resolve));
    provider = await rawProvider((req, res) => {
      if (req.url!.includes("/hang")) return; // never answers
      if (req.url!.includes("/wait")) return void hold.then(() => ok(res));
      if (req.method === "POST" && req.url === "/resources") {
        // The platform's own calls keep their longer limit: this create takes longer than a proxied call may.
        setTimeout(() => {
          slowDone++;
          res.writeHead(201);
          res.end();
        }, 2_500);
        return;
      }
      ok(res);
    });
    t = await startTestPlatform("memory", { providerCalls: { timeoutMs: 120_000, connectTimeoutMs: 5_000, proxy: { perUser: 2, timeoutMs: 1_000 } } });
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.url) }));
  });
  afterAll(async () => {
    release();
    await t.stop();
    await provider.stop();
  });

  it("caps one user's proxied calls in flight with 429, leaving other users theirs", async () => {
    const mallory = await t.admin.user("capped@example.com");
    const waiting = [mallory.get("/1.21/services/kv/authenticated-resources/wait/1"), mallory.get("/1.21/services/kv/authenticated-resources/wait/2")];
    await eventually(() => provider.received.filter((call) => call.url.includes("/wait/")).length === 2, 20_000, "two calls at the provider");
    expect(await mallory.get("/1.21/services/kv/authenticated-resources/other")).toMatchObject({
      status: 429,
      text: "You already have 2 proxied calls in flight (at most 2 at once): wait for one to be answered.",
    });
    await t.admin.ok(t.admin.get("/1.21/services/kv/authenticated-resources/other"));
    release();
    for (const answer of await Promise.all(waiting)) expect(answer.status).toBe(200);
    await mallory.ok(mallory.get("/1.21/services/kv/authenticated-resources/other"));
  });

  it("gives a proxied call a shorter time limit than the platform's own calls", async () => {
    const answer = await t.admin.get("/1.21/services/kv/authenticated-resources/hang/limit");
    expect(answer.status).toBe(502);
    expect(answer.text).toBe('The provider of the service "kv" did not answer: no answer within 1 s.');
    expect((await t.admin.post("/services/instances", { json: { name: "slow1", service_name: "kv" } })).status).toBeLessThan(300);
    expect(slowDone).toBe(1);
  });
});

describe("a caller that goes before its answer", () => {
  it("abandons the provider call and frees its place", async () => {
    const provider = await rawProvider((req, res) => (req.url!.includes("/hang") ? undefined : ok(res)));
    // Limits far longer than the test: only the caller's leaving can end the provider call.
    const t = await startTestPlatform("memory", { providerCalls: { timeoutMs: 600_000, proxy: { perUser: 1, timeoutMs: 600_000 } } });
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.url) }));
      const leaving = new AbortController();
      const gone = fetch(`${t.url}/1.21/services/kv/authenticated-resources/hang/1`, { headers: { Authorization: `bearer ${t.admin.token}` }, signal: leaving.signal }).catch(() => "aborted");
      await eventually(() => provider.received.some((call) => call.url.endsWith("/hang/1")), 20_000, "the call at the provider");
      leaving.abort();
      expect(await gone).toBe("aborted");
      await eventually(() => provider.closed.some((url) => url.endsWith("/hang/1")), 20_000, "the provider's connection closed");
      await eventually(async () => (await t.admin.get("/1.21/services/kv/authenticated-resources/free")).status === 200, 20_000, "the caller's place free again");
    } finally {
      await t.stop();
      await provider.stop();
    }
  });
});

describe("what the proxy relays", () => {
  let t: TestPlatform;
  let provider: Awaited<ReturnType<typeof rawProvider>>;
  const BINARY = Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3]);
  beforeAll(async () => {
    provider = await rawProvider((req, res, body) => {
      if (req.url!.endsWith("/status-101")) {
        res.writeHead(101, { Upgrade: "tsuru", Connection: "Upgrade" });
        return void res.end();
      }
      if (req.url!.endsWith("/status-999")) {
        res.writeHead(999, { "Content-Type": "text/plain" });
        return void res.end("odd");
      }
      if (req.url!.endsWith("/gzip")) {
        res.writeHead(200, { "Content-Type": "text/plain", "Content-Encoding": "gzip" });
        return void res.end(gzipSync("compressed hello"));
      }
      if (req.url!.endsWith("/binary")) {
        res.writeHead(200, { "Content-Type": "application/octet-stream" });
        return void res.end(body.length > 0 ? body : BINARY);
      }
      ok(res);
    });
    t = await startTestPlatform("memory");
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.url) }));
    expect((await t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("answers 502 for a provider's status that is not a final HTTP answer", async () => {
    for (const status of [101, 999]) {
      const answer = await t.admin.get(`/1.21/services/kv/authenticated-resources/status-${status}`);
      expect(answer).toMatchObject({ status: 502, text: `The provider of the service "kv" answered with the status ${status}, which is not a final HTTP answer the platform can forward.` });
    }
  });

  it("passes the provider's Content-Encoding through with its bytes", async () => {
    const answer = await fetch(`${t.url}/1.21/services/kv/authenticated-resources/gzip`, { headers: { Authorization: `bearer ${t.admin.token}` } });
    expect(answer.headers.get("Content-Encoding")).toBe("gzip");
    expect(await answer.text()).toBe("compressed hello");
  });

  it("carries binary bodies unchanged both ways", async () => {
    const headers = { Authorization: `bearer ${t.admin.token}`, "Content-Type": "application/octet-stream" };
    const up = await fetch(`${t.url}/1.20/services/kv/resources/kv1/binary`, { method: "POST", headers, body: BINARY });
    expect(up.status).toBe(200);
    expect(provider.received.find((call) => call.method === "POST" && call.url.endsWith("/binary"))!.body).toEqual(BINARY);
    expect(Buffer.from(await up.arrayBuffer())).toEqual(BINARY);
    const down = await fetch(`${t.url}/1.20/services/kv/resources/kv1/binary`, { headers });
    expect(Buffer.from(await down.arrayBuffer())).toEqual(BINARY);
  });

  it("refuses writes to the reserved sub-paths however they are spelt", async () => {
    const before = provider.received.length;
    for (const spelt of ["BIND-APP", "bind-app%20", "bind-app;x", "Bind;v=1"]) {
      const answer = await t.admin.post(`/1.20/services/kv/resources/kv1/${spelt}`, { text: "x" });
      expect([spelt, answer.status]).toEqual([spelt, 400]);
      expect(answer.text).toMatch(/is forbidden: the platform itself makes the calls that change an instance or its binds\.$/);
    }
    expect(provider.received.slice(before)).toEqual([]);
  });
});

describe("who sees a proxied call about no instance or app", () => {
  it("its sender's teams and the service's owners only", async () => {
    const provider = await rawProvider((_req, res) => ok(res));
    const t = await startTestPlatform("memory");
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.url) }));
      const [alice, bob] = [await t.admin.user("alice@example.com"), await t.admin.user("bob@example.com")];
      for (const [user, team] of [[alice, "team-a"], [bob, "team-b"]] as const) {
        await user.ok(user.post("/teams", { json: { name: team } }));
        await t.admin.ok(t.admin.put(`/services/kv/${team}`));
      }
      await alice.ok(alice.post("/1.21/services/kv/authenticated-resources/private-note", { text: "alice's private body" }));
      const paths = async (api: Api) => (await api.ok(api.get("/provider-calls?service=kv"))).json<ProviderCall[]>().map((call) => call.path);
      expect(await paths(alice)).toContain("/authenticated-resources/private-note");
      expect(await paths(t.admin)).toContain("/authenticated-resources/private-note");
      expect(await paths(bob)).not.toContain("/authenticated-resources/private-note");
    } finally {
      await t.stop();
      await provider.stop();
    }
  });
});

describe("secrets in what providers answer", () => {
  const PASSWORD = "prov-pass"; // its Basic header's base64 has padding
  const KUBE_CONFIG = { cluster: { server: "https://west.example:6443" }, user: { token: "west-cluster-token" } };
  const CLUSTERS: Cluster[] = [{ name: "west", provisioner: "kubernetes", addresses: ["https://west.example:6443"], pools: ["pool-west"], propagatedKubeConfig: KUBE_CONFIG }];
  const basic = Buffer.from(`kv-user:${PASSWORD}`).toString("base64");
  let t: TestPlatform;
  let provider: Awaited<ReturnType<typeof rawProvider>>;
  beforeAll(async () => {
    provider = await rawProvider((req, res) => {
      if (req.url!.endsWith("/echo")) {
        const kube = String(req.headers["x-tsuru-cluster-kube-config"]);
        res.writeHead(400, { "Content-Type": "text/html" });
        return void res.end(`<p>${basic.replaceAll("=", "&#61;")} ${basic.replace(/=+$/, "")}</p> ${kube} ${Buffer.from(kube, "base64").toString("utf8")}`);
      }
      if (req.url!.endsWith("/rotate-password")) {
        return ok(res, JSON.stringify({ REDIS_PASSWORD: "rotated-s3cret", REDIS_URL: "redis://app:rotated-s3cret@127.0.0.1:6379" }));
      }
      ok(res);
    });
    t = await startTestPlatform("memory", { config: { pools: [parsePool("local"), parsePool("pool-west")], clusters: CLUSTERS } });
    const service = { id: "kv", username: "kv-user", password: PASSWORD, "multi-cluster": true, endpoint: { production: provider.url } };
    await t.admin.ok(t.admin.post("/services", { text: stringify(service) }));
    expect((await t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv", pool: "pool-west" } })).status).toBeLessThan(300);
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("are redacted from the answer and the timeline in their escaped forms: Basic headers, the kube config", async () => {
    expect(basic).toMatch(/=$/);
    const echoed = await t.admin.get("/1.20/services/kv/resources/kv1/echo");
    const timeline = (await t.admin.get("/provider-calls?service=kv")).text;
    const kubeJson = JSON.stringify(KUBE_CONFIG);
    for (const secret of [basic, basic.replace(/=+$/, ""), PASSWORD, kubeJson, Buffer.from(kubeJson).toString("base64")]) {
      expect(echoed.text).not.toContain(secret);
      expect(timeline).not.toContain(secret);
    }
  });

  it("in an action's answer are masked in the timeline, as bind answers are, and reach the caller who asked", async () => {
    const rotated = await t.admin.post("/1.20/services/kv/resources/kv1/apps/web/rotate-password");
    expect(rotated.text).toContain("rotated-s3cret");
    const timeline = (await t.admin.get("/provider-calls?service=kv")).text;
    expect(timeline).not.toContain("rotated-s3cret");
    expect(timeline).toContain('\\"REDIS_PASSWORD\\":\\"<redacted>\\"');
    expect(timeline).toContain("redis://app:<redacted>@127.0.0.1:6379");
  });
});
