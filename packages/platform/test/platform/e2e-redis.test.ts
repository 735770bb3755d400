/**
 * End to end with real processes: `provider-kit platform` (embedded redis-server under its data
 * directory) drives the Redis example (`examples/redis/main.ts`, what `npm start` runs). The
 * platform is restarted in the middle and must lose nothing.
 */
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../../../../test/support/eventually.js";
import { tempDir } from "../../../../test/support/data-dirs.js";
import type { Api } from "./helpers.js";
import { removeDir, START_MS, startPlatformProcess, startRedisExample, type ExampleProvider, type PlatformProcess } from "../../../../test/support/redis-example.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";

interface EnvVar {
  name: string;
  value: string;
}

describe("the platform drives the Redis example end to end", { timeout: 120_000 }, () => {
  let platformDir: string;
  let provider: ExampleProvider | undefined;
  let platform: PlatformProcess | undefined;
  let api: Api;

  /** The first start takes any free port; a restart takes the same one again. */
  async function startPlatform(): Promise<Api> {
    platform = await startPlatformProcess(platformDir, platform ? Number(new URL(platform.url).port) : 0);
    return platform.api;
  }

  beforeAll(async () => {
    platformDir = await tempDir("e2e-platform");
    provider = await startRedisExample();
    api = await startPlatform();
  }, 2 * START_MS);

  afterAll(async () => {
    await platform?.stop();
    await provider?.stop();
    await removeDir(platformDir);
  });

  const run = (app: string, command: string) => api.ok(api.post(`/apps/${app}/run?once=true`, { text: command }));
  const ping = 'redis-cli --no-auth-warning -u "$REDIS_URL" ping';

  it("registers, creates, binds, runs redis-cli through the app's env, survives a restart, adds a unit, unbinds and removes", async () => {
    await api.ok(api.post("/services", { text: provider!.manifest }));
    await api.ok(api.post("/apps", { json: { name: "web", platform: "node" } }));
    await api.ok(api.put("/apps/web/units", { text: "1" }));

    await api.ok(api.post("/services/instances", { json: { name: "cache", service_name: "redis", plan: "shared" } }), 201);
    await api.ok(api.post("/services/instances", { json: { name: "big", service_name: "redis", plan: "dedicated" } }), 201);
    // A dedicated instance is provisioned in the background: wait for the provider to say it is up.
    await eventually(async () => (await api.get("/services/instances/big/status")).text === 'Service instance "big" is up', 60_000);

    const shared = (await api.ok(api.put("/services/instances/cache/web"))).json<Record<string, string>>();
    expect(Object.keys(shared)).toEqual(expect.arrayContaining(["REDIS_URL", "REDIS_HOST", "REDIS_PORT", "REDIS_PASSWORD"]));
    expect((await run("web", ping)).text.trim()).toBe("PONG");
    const names = (await api.get("/apps/web/env")).json<EnvVar[]>().map((variable) => variable.name);
    expect(names).toEqual(expect.arrayContaining(["REDIS_URL", "TSURU_SERVICES", "TSURU_APPNAME"]));
    const services = JSON.parse((await run("web", 'printf %s "$TSURU_SERVICES"')).text) as Record<string, Array<{ instance_name: string }>>;
    expect(services.redis!.map((entry) => entry.instance_name)).toEqual(["cache"]);

    // The platform restarts: its state is in the embedded redis-server's files under --data-dir.
    await platform!.stop();
    api = await startPlatform();
    expect((await api.get("/services/instances?app=web")).json()).toEqual([{ service: "redis", instances: ["cache"] }]);
    expect((await run("web", ping)).text.trim()).toBe("PONG");

    // Dedicated: its own redis-server; the app now has both instances in TSURU_SERVICES.
    await api.ok(api.put("/services/instances/big/web"));
    const both = JSON.parse((await run("web", 'printf %s "$TSURU_SERVICES"')).text) as Record<string, Array<{ instance_name: string; envs: Record<string, string> }>>;
    expect(both.redis!.map((entry) => entry.instance_name)).toEqual(["cache", "big"]);
    const bigUrl = both.redis![1]!.envs.REDIS_URL!;
    expect((await run("web", `redis-cli --no-auth-warning -u '${bigUrl}' ping`)).text.trim()).toBe("PONG");

    // A third unit: the provider is sent one unit bind per bound instance, and answers it.
    await api.ok(api.put("/apps/web/units", { text: "1" }));
    const units = (await api.get("/apps/web")).json<{ Units: Array<{ Ip: string }> }>().Units;
    const newest = units.at(-1)!.Ip;
    const calls = (await api.get("/provider-calls?app=web")).json<ProviderCall[]>();
    const unitBinds = calls.filter((call) => call.method === "POST" && call.path.endsWith("/bind") && call.requestBody.includes(`unit-host=${newest}`));
    expect(unitBinds.map((call) => [call.instance, call.status]).sort()).toEqual([["big", 201], ["cache", 201]]);

    await api.ok(api.delete("/services/instances/cache/web"));
    await api.ok(api.delete("/services/instances/big/web"));
    expect((await api.get("/apps/web/env")).json<EnvVar[]>().map((variable) => variable.name)).not.toContain("REDIS_URL");
    await api.ok(api.delete("/services/instances/cache"));
    await api.ok(api.delete("/services/instances/big"));
    expect((await api.get("/services/instances")).json()).toEqual([{ service: "redis", instances: [] }]);
    // Every call is shown on the platform's terminal, one line each.
    expect(platform!.process.output()).toMatch(/provider redis: DELETE \/resources\/cache\/bind-app -> 200 \(\d+ ms\)/);
  });

  it("deploys (new units bound on the provider), runs the healers and the full health check against the Redis example", async () => {
    await api.ok(api.post("/services/instances", { json: { name: "store", service_name: "redis", plan: "shared" } }), 201);
    await api.ok(api.put("/services/instances/store/web"));
    const before = (await api.get("/apps/web")).json<{ Units: Array<{ Ip: string }> }>().Units.map((unit) => unit.Ip);

    const deploy = (await api.ok(api.post("/apps/web/deploy", { json: { image: "registry.local/web:v2" } }))).json<{ ID: string; Duration: number; Log: string }>();
    expect(Number.isInteger(deploy.Duration) && deploy.Duration > 0).toBe(true);
    const after = (await api.get("/apps/web")).json<{ Units: Array<{ Ip: string }> }>().Units.map((unit) => unit.Ip);
    expect(after).toHaveLength(before.length);
    const calls = (await api.get("/provider-calls?instance=store")).json<ProviderCall[]>();
    for (const ip of after) {
      const bindCall = calls.find((call) => call.method === "POST" && call.path === "/resources/store/bind" && call.requestBody.includes(`unit-host=${ip}`));
      expect(bindCall?.status, ip).toBe(201);
    }
    for (const ip of before) {
      expect(calls.some((call) => call.method === "DELETE" && call.path === "/resources/store/bind" && call.requestBody.includes(`unit-host=${ip}`)), ip).toBe(true);
    }
    expect((await api.get(`/deploys/${deploy.ID}`)).json()).toMatchObject({ ID: deploy.ID, App: "web", Image: "registry.local/web:v2" });
    expect((await api.get("/deploys?service=redis")).json<Array<{ ID: string }>>().map((item) => item.ID)).toEqual([deploy.ID]);
    // The new units reach Redis with the app's env.
    expect((await api.ok(api.post("/apps/web/run", { text: ping }))).text.trim().split("\n")).toEqual(after.map(() => "PONG"));

    expect((await api.ok(api.get("/healers/bind-units"))).text).toBe("nothing to do\n");
    expect((await api.ok(api.get("/healers/instance-status"))).text).toBe('Service instance "store" is up\n');
    expect(platform!.process.output()).toContain('healer instance-status: Service instance "store" is up');
    const health = await api.get("/healthcheck/?check=all");
    expect(health.status).toBe(200);
    expect(health.text).toMatch(/^Store \(redis\): WORKING \(.+\)\nProvider redis: WORKING \(.+\)\n$/);

    await api.ok(api.delete("/services/instances/store/web"));
    await api.ok(api.delete("/services/instances/store"));
  });

  it("rotates a bound app's password through the proxy, the app working before, during and after the rotation and rebind", async () => {
    await api.ok(api.post("/services/instances", { json: { name: "sessions", service_name: "redis", plan: "shared" } }), 201);
    await api.ok(api.put("/services/instances/sessions/web"));
    const urlOfApp = async () => {
      const services = JSON.parse((await run("web", 'printf %s "$TSURU_SERVICES"')).text) as Record<string, Array<{ envs: Record<string, string> }>>;
      return services.redis![0]!.envs.REDIS_URL!;
    };
    const appUrl = await urlOfApp();
    // The app's long-lived connection, opened with the environment the platform gave it.
    const connection = createClient({ url: appUrl }).on("error", () => {});
    await connection.connect();
    const logsIn = async (url: string) => {
      const client = createClient({ url, socket: { reconnectStrategy: false } }).on("error", () => {});
      try {
        await client.connect();
        return await client.ping();
      } catch (error) {
        return String(error);
      } finally {
        if (client.isOpen) client.destroy();
      }
    };
    try {
      expect([await connection.ping(), (await run("web", ping)).text.trim()]).toEqual(["PONG", "PONG"]);

      // The platform's proxy forwards the action; the provider's answer is the new environment.
      const rotated = (await api.ok(api.post("/1.20/services/redis/resources/sessions/apps/web/rotate-password"))).json<Record<string, string>>();
      expect(rotated.REDIS_URL).not.toBe(appUrl);
      // During the rotation: the app's environment is unchanged, and it still works, open or new.
      expect(await urlOfApp()).toBe(appUrl);
      expect([await connection.ping(), (await run("web", ping)).text.trim(), await logsIn(rotated.REDIS_URL!)]).toEqual(["PONG", "PONG", "PONG"]);

      // Bound again: the app gets a new password and works; every older one is retired.
      await api.ok(api.delete("/services/instances/sessions/web"));
      await api.ok(api.put("/services/instances/sessions/web"));
      const reboundUrl = await urlOfApp();
      expect(reboundUrl).not.toBe(appUrl);
      expect((await run("web", ping)).text.trim()).toBe("PONG");
      expect(await logsIn(reboundUrl)).toBe("PONG");
      expect(await logsIn(appUrl)).toMatch(/WRONGPASS/);
      expect(await logsIn(rotated.REDIS_URL!)).toMatch(/WRONGPASS/);
      const nothingLeft = await api.post("/1.20/services/redis/resources/sessions/apps/web/retire-old-passwords");
      expect([nothingLeft.status, nothingLeft.text]).toEqual([409, expect.stringContaining("nothing to retire")]);
    } finally {
      connection.destroy();
    }
    await api.ok(api.delete("/services/instances/sessions/web"));
    await api.ok(api.delete("/services/instances/sessions"));
  });
});
