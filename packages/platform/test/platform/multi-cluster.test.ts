/**
 * Multi-cluster services on the local platform: instances live in pools, every call about one
 * goes to the endpoint of its pool's cluster (else `production`) with the pool's X-Tsuru-*
 * headers, as today's platform sends them; providers here are real ones on loopback.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { parsePool, type Cluster } from "../../src/platform/domain/config.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import type { CallPlacement, ProviderHandlers } from "provider-kit";
import { fakeResource, PASSWORD, start, USER, type Running } from "../../../../test/support/fake-provider.js";
import { STORES, startTestPlatform, type Api, type TestPlatform } from "./helpers.js";

const KUBE_CONFIG = { cluster: { server: "https://west.example:6443" }, user: { token: "west-cluster-token" } };
const CLUSTERS: Cluster[] = [
  { name: "east", provisioner: "kubernetes", addresses: ["https://east.example:6443"], pools: ["pool-east"] },
  { name: "west", provisioner: "kubernetes", addresses: ["https://w1.example:6443", "https://w2.example:6443"], pools: ["pool-west"], propagatedKubeConfig: KUBE_CONFIG },
];

interface Seen {
  handler: string;
  placement: CallPlacement;
}

/** A provider whose every handler notes the placement it was called with. */
async function placementProvider(): Promise<{ running: Running; seen: Seen[] }> {
  const seen: Seen[] = [];
  const { handlers } = fakeResource();
  const noting = Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [
      name,
      (...args: unknown[]) => {
        const context = args.at(-1) as { placement: CallPlacement };
        seen.push({ handler: name, placement: context.placement });
        return (handler as (...given: unknown[]) => unknown)(...args);
      },
    ]),
  ) as unknown as ProviderHandlers;
  return { running: await start(noting), seen };
}

describe.each(STORES)("multi-cluster services (%s store)", (kind) => {
  let t: TestPlatform;
  let production: Awaited<ReturnType<typeof placementProvider>>;
  let west: Awaited<ReturnType<typeof placementProvider>>;
  const calls = async (api: Api, instance: string) => (await api.get(`/provider-calls?instance=${instance}`)).json<ProviderCall[]>();

  beforeAll(async () => {
    [production, west] = await Promise.all([placementProvider(), placementProvider()]);
    t = await startTestPlatform(kind, {
      config: {
        pools: [parsePool("local"), parsePool("pool-east"), parsePool("pool-west"), { ...parsePool("pool-gpu"), services: ["other"] }],
        clusters: CLUSTERS,
      },
    });
    const manifest = {
      id: "mc",
      username: USER,
      password: PASSWORD,
      "multi-cluster": true,
      endpoint: { production: production.running.url, west: west.running.url },
      variant: "current",
    };
    await t.admin.ok(t.admin.post("/services", { text: stringify(manifest) }));
    await t.admin.ok(t.admin.post("/services", { text: stringify({ ...manifest, id: "plain", "multi-cluster": false }) }));
  });
  afterAll(async () => {
    await t?.stop();
    await Promise.all([production?.running.stop(), west?.running.stop()]);
  });

  it("refuses an instance without a pool, in an unknown pool or one that does not admit the service, and a pool for a plain service", async () => {
    const create = (json: Record<string, unknown>) => t.admin.post("/services/instances", { json: { name: "x1", service_name: "mc", ...json } });
    expect(await create({})).toMatchObject({ status: 400, text: "multi-cluster service instance requires a pool: give one of local, pool-east, pool-west." });
    expect(await create({ pool: "nowhere" })).toMatchObject({ status: 404, text: 'Pool "nowhere" not found: give one of local, pool-east, pool-west.' });
    expect(await create({ pool: "pool-gpu" })).toMatchObject({ status: 400, text: 'Service "mc" is not available in pool "pool-gpu": give one of local, pool-east, pool-west.' });
    const plain = await t.admin.post("/services/instances", { json: { name: "x1", service_name: "plain", pool: "pool-east" } });
    expect(plain.status).toBe(400);
    expect(plain.text).toMatch(/^regular \(non-multi-cluster\) service instance cannot belong to a pool/);
    expect([...production.seen, ...west.seen].filter((call) => call.handler === "create")).toEqual([]);
  });

  it("sends every call about an instance to its cluster's endpoint, with the pool's headers and the propagated kube config", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "inwest", service_name: "mc", pool: "pool-west" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "webapp", platform: "go", pool: "pool-east" } }));
    await t.admin.ok(t.admin.put("/services/instances/inwest/webapp"));
    await t.admin.ok(t.admin.get("/services/instances/inwest/status"));
    const info = (await t.admin.ok(t.admin.get("/services/instances/inwest"))).json<Record<string, unknown>>();
    expect(info).toMatchObject({ pool: "pool-west", cluster: "west" });
    await t.admin.ok(t.admin.delete("/services/instances/inwest/webapp"));
    await t.admin.ok(t.admin.delete("/services/instances/inwest"));

    const expected: CallPlacement = {
      poolName: "pool-west",
      poolProvisioner: "local",
      clusterName: "west",
      clusterProvisioner: "kubernetes",
      clusterAddresses: ["https://w1.example:6443", "https://w2.example:6443"],
      kubeConfig: KUBE_CONFIG,
    };
    expect(west.seen.map((call) => call.handler)).toEqual(["create", "bindApp", "status", "info", "unbindApp", "destroy"]);
    for (const call of west.seen) expect(call.placement).toEqual(expected);
    expect(production.seen).toEqual([]);

    // The app's own placement travels in the bind's fields; the kube config never reaches the timeline.
    const recorded = await calls(t.admin, "inwest");
    expect(new Set(recorded.map((call) => call.url))).toEqual(new Set([west.running.url]));
    const bindCall = recorded.find((call) => call.path.endsWith("/bind-app") && call.method === "POST")!;
    expect(bindCall.requestBody).toContain("app-pool-name=pool-east");
    expect(bindCall.requestBody).toContain("app-cluster-name=east");
    expect(bindCall.requestHeaders["X-Tsuru-Cluster-Kube-Config"]).toBe("<redacted>");
    expect(bindCall.curl).toContain(`'X-Tsuru-Cluster-Kube-Config: '"$CLUSTER_KUBE_CONFIG"`);
    expect(JSON.stringify(recorded)).not.toContain(Buffer.from(JSON.stringify(KUBE_CONFIG)).toString("base64"));
  });

  it("falls back to production for a pool whose cluster has no endpoint of its own, and sends no kube config its cluster keeps", async () => {
    production.seen.length = 0;
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "ineast", service_name: "mc", pool: "pool-east" } }), 201);
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "inlocal", service_name: "mc", pool: "local" } }), 201);
    expect(production.seen.map((call) => [call.handler, call.placement])).toEqual([
      ["create", { poolName: "pool-east", poolProvisioner: "local", clusterName: "east", clusterProvisioner: "kubernetes", clusterAddresses: ["https://east.example:6443"] }],
      // No cluster serves `local` (no default cluster is configured here): the pool's headers only.
      ["create", { poolName: "local", poolProvisioner: "local", clusterAddresses: [] }],
    ]);
    expect((await calls(t.admin, "ineast"))[0]!.url).toBe(production.running.url);
  });

  it("proxies a call about an instance to its cluster's endpoint, and service-level calls to production", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "proxied", service_name: "mc", pool: "pool-west" } }), 201);
    const answer = await t.admin.get("/1.20/services/mc/resources/proxied/status");
    expect(answer.status).toBe(204);
    const [, proxied] = await calls(t.admin, "proxied");
    expect(proxied).toMatchObject({ url: west.running.url, path: "/resources/proxied/status", requestHeaders: { "X-Tsuru-Pool-Name": "pool-west" } });

    await t.admin.get("/services/proxy/service/mc?callback=/resources/plans");
    const all = (await t.admin.get("/provider-calls?service=mc")).json<ProviderCall[]>();
    const serviceCall = all.findLast((call) => call.path === "/resources/plans")!;
    expect(serviceCall.url).toBe(production.running.url);
    expect(serviceCall.requestHeaders["X-Tsuru-Pool-Name"]).toBeUndefined();
  });

  it("takes today's client's forms: multi-cluster and endpoints.<cluster> for the service, the pool for the instance", async () => {
    const form = (fields: Record<string, string>) => ({ text: new URLSearchParams(fields).toString(), headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    const service = { id: "formed", username: USER, password: PASSWORD, endpoint: production.running.url, "endpoints.west": west.running.url, "multi-cluster": "true" };
    await t.admin.ok(t.admin.post("/1.0/services", form(service)), 201);
    await t.admin.ok(t.admin.post("/1.0/services/formed/instances", form({ name: "viaclient", pool: "pool-west" })), 201);
    expect((await calls(t.admin, "viaclient"))[0]).toMatchObject({ url: west.running.url, requestHeaders: { "X-Tsuru-Cluster-Name": "west" } });
    const bad = await t.admin.post("/1.0/services", form({ ...service, id: "badform", "endpoints.west": "ftp://nowhere" }));
    expect([bad.status, bad.text]).toEqual([400, 'Invalid endpoint.west "ftp://nowhere": give the provider\'s http:// or https:// address.']);
  });
});

describe("multi-cluster from the seed file", () => {
  it("configures pools and clusters and creates instances in them", async () => {
    const provider = await placementProvider();
    const dir = await mkdtemp(join(tmpdir(), "pk-seed-mc-"));
    const seedFile = join(dir, "seed.yaml");
    await writeFile(
      seedFile,
      stringify({
        pools: [{ name: "blue", provisioner: "kubernetes" }],
        clusters: [{ name: "sky", provisioner: "kubernetes", addresses: ["https://sky.example:6443"], pools: ["blue"] }],
        services: [{ id: "seeded", username: USER, password: PASSWORD, "multi-cluster": true, endpoint: { production: "http://127.0.0.1:9", sky: provider.running.url } }],
        instances: [{ name: "skyward", service: "seeded", pool: "blue" }],
      }),
    );
    const t = await startTestPlatform("memory", { seedFile });
    try {
      expect(provider.seen).toEqual([
        { handler: "create", placement: { poolName: "blue", poolProvisioner: "kubernetes", clusterName: "sky", clusterProvisioner: "kubernetes", clusterAddresses: ["https://sky.example:6443"] } },
      ]);
      expect((await t.admin.get("/pools")).json()).toEqual([{ Team: "admin", Pools: ["blue"] }]);
    } finally {
      await t.stop();
      await provider.running.stop();
      await rm(dir, { recursive: true });
    }
  });
});

describe("multi-cluster configuration", () => {
  it("refuses clusters that name an unknown pool, share a pool, or are both the default", async () => {
    const attempt = (clusters: Cluster[]) => startTestPlatform("memory", { config: { pools: [parsePool("a"), parsePool("b")], clusters } });
    const cluster = (name: string, pools: string[]): Cluster => ({ name, provisioner: "local", addresses: [], pools });
    await expect(attempt([cluster("one", ["c"])])).rejects.toThrow('The cluster "one" serves the pool "c", which is not configured: add --pool c.');
    await expect(attempt([cluster("one", ["a"]), cluster("two", ["a", "b"])])).rejects.toThrow('The pool "a" is served by two clusters');
    await expect(attempt([cluster("one", []), cluster("two", [])])).rejects.toThrow("both would be the default cluster");
  });
});

describe("a cluster's kube config and the pool's rules, attacked by a user of another team", () => {
  const VAULT_CONFIG = { cluster: { server: "https://vault.example:6443" }, user: { token: "vault-cluster-token" } };
  const OPEN_CONFIG = { cluster: { server: "https://open.example:6443" }, user: { token: "open-cluster-token" } };
  let t: TestPlatform;
  let mallory: Api;
  let evil: Awaited<ReturnType<typeof placementProvider>>;
  const evilManifest = (url: string) => stringify({ id: "evil", username: USER, password: PASSWORD, "multi-cluster": true, endpoint: { production: url } });
  const kubeConfigsSeen = () => evil.seen.map((call) => call.placement.kubeConfig).filter((config) => config !== undefined);

  beforeAll(async () => {
    evil = await placementProvider();
    t = await startTestPlatform("memory", {
      config: {
        pools: [parsePool("open"), parsePool("vault=team-vault")],
        clusters: [
          { name: "open-cluster", provisioner: "kubernetes", addresses: [], pools: ["open"], propagatedKubeConfig: OPEN_CONFIG },
          { name: "vault-cluster", provisioner: "kubernetes", addresses: [], pools: ["vault"], propagatedKubeConfig: VAULT_CONFIG },
        ],
      },
    });
    await t.admin.ok(t.admin.post("/teams", { json: { name: "team-vault" } }));
    mallory = await t.admin.user("mallory@example.com");
    await mallory.ok(mallory.post("/teams", { json: { name: "team-mallory" } }));
    await mallory.ok(mallory.post("/services", { text: evilManifest(evil.running.url) }));
  });
  afterAll(async () => {
    await t?.stop();
    await evil?.running.stop();
  });

  it("refuses an instance in a pool reserved to another team, before any call", async () => {
    const answer = await mallory.post("/services/instances", { json: { name: "stolen", service_name: "evil", pool: "vault" } });
    expect([answer.status, answer.text]).toEqual([403, 'The pool "vault" is not open to the team "team-mallory": give one of open.']);
    expect(evil.seen).toEqual([]);
  });

  it("refuses the plans of a pool reserved to another team, before any call", async () => {
    const answer = await mallory.get("/services/evil/plans?pool=vault");
    expect([answer.status, answer.text]).toEqual([403, 'The pool "vault" is not open to your teams: give one of open.']);
    expect(evil.seen).toEqual([]);
  });

  it("sends no kube config to a service a user registered, in a pool open to it, until an admin gives its manifest", async () => {
    await mallory.ok(mallory.post("/services/instances", { json: { name: "mine", service_name: "evil", pool: "open" } }), 201);
    await mallory.ok(mallory.get("/services/evil/plans?pool=open"));
    expect(evil.seen.map((call) => [call.handler, call.placement.poolName])).toEqual([["create", "open"], ["plans", "open"]]);
    expect(kubeConfigsSeen()).toEqual([]);

    // The admin gives the same manifest: the admin chose where it goes, so the kube config follows.
    await t.admin.ok(t.admin.put("/services", { text: evilManifest(evil.running.url) }));
    await mallory.ok(mallory.get("/services/evil/plans?pool=open"));
    expect(kubeConfigsSeen()).toEqual([OPEN_CONFIG]);

    // Its owner points it elsewhere again: the admin's choice no longer holds.
    await mallory.ok(mallory.put("/services", { text: evilManifest(evil.running.url) }));
    await mallory.ok(mallory.get("/services/evil/plans?pool=open"));
    expect(kubeConfigsSeen()).toEqual([OPEN_CONFIG]);
  });
});
