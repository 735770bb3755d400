/**
 * A multi-cluster service end to end with real processes: `provider-kit platform` (pools and
 * clusters from its seed file) drives two Redis example processes, each serving one cluster as
 * one endpoint of the service. Instances reach their cluster's provider with the pool's headers;
 * the example's actions are called through each of the platform's four proxy routes, refused
 * where the permission rules say so, and their effect is checked on the real Redis.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { actionsManifest } from "provider-kit";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { actions } from "../../../../examples/redis/actions.js";
import { tempDir } from "../../../../test/support/data-dirs.js";
import { ADMIN, Api } from "./helpers.js";
import { PROVIDER_PASSWORD, removeDir, START_MS, startPlatformProcess, startRedisExample, type ExampleProvider, type PlatformProcess } from "../../../../test/support/redis-example.js";

const DEV = { email: "dev@example.com", password: "dev-password" };
const OPS = { email: "ops@example.com", password: "ops-password" };

describe("a multi-cluster service on two clusters, end to end", { timeout: 180_000 }, () => {
  let dir: string;
  let east: ExampleProvider | undefined;
  let west: ExampleProvider | undefined;
  let platform: PlatformProcess | undefined;
  let admin: Api;
  let dev: Api;
  let ops: Api;

  beforeAll(async () => {
    dir = await tempDir("e2e-multi-cluster");
    [east, west] = await Promise.all([startRedisExample({ clusterName: "east" }), startRedisExample({ clusterName: "west" })]);
    const seedFile = join(dir, "seed.yaml");
    await writeFile(
      seedFile,
      stringify({
        pools: [
          { name: "pool-east", provisioner: "kubernetes" },
          { name: "pool-west", provisioner: "kubernetes" },
          { name: "pool-north", provisioner: "kubernetes" },
        ],
        clusters: [
          { name: "east", provisioner: "kubernetes", addresses: ["https://east.example:6443"], pools: ["pool-east"] },
          { name: "west", provisioner: "kubernetes", addresses: ["https://w1.example:6443", "https://w2.example:6443"], pools: ["pool-west"] },
          // No endpoint of its own: its calls go to production, the east provider, which refuses them.
          { name: "north", provisioner: "kubernetes", pools: ["pool-north"] },
        ],
        users: [DEV, OPS],
        teams: [
          { name: "devs", users: [DEV.email] },
          { name: "ops", users: [OPS.email] },
        ],
      }),
    );
    platform = await startPlatformProcess(join(dir, "platform"), 0, ["--seed", seedFile]);
    admin = platform.api;
    const anonymous = new Api(platform.url);
    [dev, ops] = await Promise.all([anonymous.login(DEV.email, DEV.password), anonymous.login(OPS.email, OPS.password)]);
    // The admin created the teams, so is in them; out of them, the service it registers is the admin team's alone.
    for (const team of ["devs", "ops"]) await admin.ok(admin.delete(`/teams/${team}/${ADMIN.email}`));
    const service = { id: "redis", username: "redis", password: PROVIDER_PASSWORD, variant: "current", "multi-cluster": true, endpoint: { production: east.url, west: west.url } };
    await admin.ok(admin.post("/services", { text: stringify(service) }));
  }, 3 * START_MS);

  afterAll(async () => {
    await platform?.stop();
    await Promise.all([east?.stop(), west?.stop()]);
    await removeDir(dir);
  });

  const callsOf = async (instance: string) => (await admin.get(`/provider-calls?instance=${instance}`)).json<ProviderCall[]>();
  const envOf = async (app: string, name: string) => (await dev.ok(dev.get(`/apps/${app}/env/${name}`))).json<{ value: string }>().value;

  it("creates an instance in each pool on its cluster's provider, with the pool's headers", async () => {
    await admin.ok(admin.put("/services/redis/devs"));
    await dev.ok(dev.post("/services/instances", { json: { name: "eastcache", service_name: "redis", plan: "shared", pool: "pool-east" } }), 201);
    await dev.ok(dev.post("/services/instances", { json: { name: "westcache", service_name: "redis", plan: "shared", pool: "pool-west" } }), 201);

    const info = async (name: string) => (await dev.ok(dev.get(`/services/instances/${name}`))).json<{ pool: string; cluster: string; info: Record<string, string> }>();
    // The provider's own info says which process holds the instance.
    expect(await info("eastcache")).toMatchObject({ pool: "pool-east", cluster: "east", info: { Cluster: "east" } });
    expect(await info("westcache")).toMatchObject({ pool: "pool-west", cluster: "west", info: { Cluster: "west" } });

    const [westCreate] = await callsOf("westcache");
    expect(westCreate).toMatchObject({
      url: west!.url,
      path: "/resources",
      status: 201,
      requestHeaders: {
        "X-Tsuru-Pool-Name": "pool-west",
        "X-Tsuru-Pool-Provisioner": "kubernetes",
        "X-Tsuru-Cluster-Name": "west",
        "X-Tsuru-Cluster-Provisioner": "kubernetes",
        "X-Tsuru-Cluster-Addresses": ["https://w1.example:6443", "https://w2.example:6443"],
      },
    });
    expect((await callsOf("eastcache"))[0]).toMatchObject({ url: east!.url, status: 201, requestHeaders: { "X-Tsuru-Cluster-Name": "east" } });

    // Plans: the pool's, asked of its cluster's provider; without a pool, the platform says which to give.
    const noPool = await dev.get("/services/redis/plans");
    expect([noPool.status, noPool.text]).toEqual([400, "You must provide the pool name, available pools: pool-east, pool-west, pool-north"]);
    expect((await dev.ok(dev.get("/services/redis/plans?pool=pool-west"))).json()).toEqual([
      { name: "shared", description: expect.any(String) },
      { name: "dedicated", description: expect.any(String) },
    ]);
    const plansCall = (await admin.get("/provider-calls?service=redis")).json<ProviderCall[]>().findLast((call) => call.path === "/resources/plans")!;
    expect(plansCall).toMatchObject({ url: west!.url, status: 200, requestHeaders: { "X-Tsuru-Pool-Name": "pool-west", "X-Tsuru-Cluster-Name": "west" } });

    // A pool whose cluster has no endpoint falls back to production, whose provider serves another cluster.
    const north = await dev.post("/services/instances", { json: { name: "northcache", service_name: "redis", plan: "shared", pool: "pool-north" } });
    expect(north.status).toBe(500);
    expect(north.text).toContain('This provider serves the cluster "east" and the call is for the pool "pool-north" on the cluster "north"');
  });

  it("binds an app to each instance, and its Redis works with the credentials each provider gave", async () => {
    await dev.ok(dev.post("/apps", { json: { name: "web", platform: "node", pool: "pool-east" } }));
    await dev.ok(dev.put("/services/instances/eastcache/web"));
    await dev.ok(dev.put("/services/instances/westcache/web"));
    const services = JSON.parse(await envOf("web", "TSURU_SERVICES")) as { redis: Array<{ instance_name: string; envs: Record<string, string> }> };
    const byInstance = Object.fromEntries(services.redis.map((entry) => [entry.instance_name, entry.envs]));
    // Two providers, two shared servers: the two instances live on different Redis servers.
    expect(byInstance.eastcache!.REDIS_PORT).not.toBe(byInstance.westcache!.REDIS_PORT);
    for (const envs of Object.values(byInstance)) {
      const client = createClient({ url: envs.REDIS_URL });
      await client.connect();
      try {
        expect(await client.ping()).toBe("PONG");
      } finally {
        client.destroy();
      }
    }
  });

  it("calls the example's actions through each proxy route, as the permission rules allow", async () => {
    await admin.ok(admin.put("/1.31/services/redis/manifest", { json: actionsManifest(actions) }));
    const services = JSON.parse(await envOf("web", "TSURU_SERVICES")) as { redis: Array<{ instance_name: string; envs: Record<string, string> }> };
    const westEnv = services.redis.find((entry) => entry.instance_name === "westcache")!.envs;
    // Retiring the old password closes this connection: that is no failure here.
    const client = createClient({ url: westEnv.REDIS_URL }).on("error", () => {});
    await client.connect();
    try {
      const key = `${westEnv.REDIS_KEY_PREFIX}greeting`;
      await client.set(key, "hello");

      // strict_actions: access to the instance is not enough; the action's permission is.
      const refused = await dev.post("/1.20/services/redis/resources/westcache/flush");
      expect(refused.status).toBe(403);
      expect(refused.text).toContain("service-action.redis.flush");
      expect(await client.get(key)).toBe("hello");

      await admin.ok(admin.put("/1.31/services/redis/actions/flush/devs"));
      await admin.ok(admin.put("/1.31/services/redis/actions/memory/devs"));
      // v2, then v1: both reach the west provider, which holds the instance.
      const memory = await dev.ok(dev.get("/1.20/services/redis/resources/westcache/memory"));
      expect(memory.json()).toMatchObject({ plan: "shared", keys: 1 });
      const flushed = await dev.ok(dev.post("/services/redis/proxy/westcache?callback=/resources/westcache/flush"));
      expect(flushed.json()).toEqual({ removedKeys: 1 });
      expect(await client.get(key)).toBeNull();
      const proxied = (await callsOf("westcache")).filter((call) => call.path.endsWith("/flush") || call.path.endsWith("/memory"));
      expect(proxied.map((call) => [call.method, call.url, call.requestHeaders["X-Tsuru-Cluster-Name"]])).toEqual([
        ["GET", west!.url, "west"],
        ["POST", west!.url, "west"],
      ]);

      // A team without access to the instance is refused whatever it holds.
      expect((await ops.get("/1.20/services/redis/resources/westcache/memory")).status).toBe(403);

      // A grant on a leading part covers the actions below it: the app's password changes for real,
      // the old one working until it is retired.
      await admin.ok(admin.put("/1.31/services/redis/actions/apps/devs"));
      const rotated = (await dev.ok(dev.post("/1.20/services/redis/resources/westcache/apps/web/rotate-password"))).json<Record<string, string>>();
      expect(rotated.REDIS_PASSWORD).not.toBe(westEnv.REDIS_PASSWORD);
      expect(await client.ping()).toBe("PONG");
      await dev.ok(dev.post("/1.20/services/redis/resources/westcache/apps/web/retire-old-passwords"));
      const stale = createClient({ url: westEnv.REDIS_URL, socket: { reconnectStrategy: false } }).on("error", () => {});
      await expect(stale.connect()).rejects.toThrow(/WRONGPASS/);
      stale.destroy();
    } finally {
      client.destroy();
    }
  });

  it("sends the service proxy and authenticated-resources to production, as the platform does", async () => {
    // The service proxy is for the owner teams, and reaches production: the east provider.
    expect((await dev.get("/services/proxy/service/redis?callback=/resources/eastcache/memory")).status).toBe(403);
    expect((await admin.ok(admin.get("/services/proxy/service/redis?callback=/resources/eastcache/memory"))).json()).toMatchObject({ plan: "shared" });
    const lost = await admin.get("/services/proxy/service/redis?callback=/resources/westcache/memory");
    expect([lost.status, lost.text]).toEqual([404, 'Instance "westcache" not found.']);

    // Any logged-in user, no permission: the service-wide action answers where production runs.
    expect((await ops.ok(ops.get("/1.21/services/redis/authenticated-resources/where"))).json()).toEqual({ cluster: "east", plans: ["shared", "dedicated"] });
    expect((await new Api(platform!.url).get("/1.21/services/redis/authenticated-resources/where")).status).toBe(401);
  });
});
