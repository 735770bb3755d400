/**
 * The provider as an operator relies on it: a registry server apart from the one tenants reach,
 * a memory limit on the tenants' server, a server that dies (kill -9) or freezes is restarted,
 * or reported, without restarting the provider; metrics on a port of their own.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { startRedisProvider, type RunningProvider } from "../redis-provider.js";
import type { Config } from "../config.js";
import { join } from "node:path";
import { parsePrometheusText } from "../../../test/support/prometheus.js";
import { appClient, bindEnv, failure, isAlive, killServersUnder, PASSWORD, pidIn, platform, tempDir, testConfig } from "./support.js";

/** How long a killed server may take to come back on a loaded machine; the waits end once it has. */
const RESTART_MS = 60_000;

describe("the Redis provider in operation", { timeout: 2 * RESTART_MS }, () => {
  const providers: RunningProvider[] = [];
  const dirs: string[] = [];
  const redisServers: RedisServer[] = [];
  afterEach(async () => {
    await Promise.all(providers.splice(0).map((provider) => provider.close()));
    await Promise.all(redisServers.splice(0).map((server) => server.stop()));
    await Promise.all(dirs.splice(0).map((dir) => killServersUnder(dir)));
  });

  /** A provider whose log lines are kept, parsed. */
  async function start(overrides: Partial<Config> = {}) {
    const dataDir = await tempDir("embedded");
    dirs.push(dataDir);
    const logs: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split("\n")) if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const provider = await startRedisProvider(testConfig({ dataDir, ...overrides }), { logger: pino({ level: "info" }, sink) });
    providers.push(provider);
    return { provider, dataDir, logs, api: platform(provider.url) };
  }

  const health = async (url: string) => {
    const answer = await fetch(`${url}/healthcheck?check=all`);
    return { status: answer.status, text: await answer.text() };
  };

  it("restarts the administered server after kill -9, and the next calls succeed without a provider restart", async () => {
    const { provider, dataDir, logs, api } = await start();
    expect((await api.create("cache", "shared")).status).toBe(201);
    const before = (await pidIn(join(dataDir, "embedded")))!;
    process.kill(before, "SIGKILL");

    await vi.waitFor(async () => expect((await api.create("after", "shared")).status).toBe(201), { timeout: RESTART_MS, interval: 100 });
    const after = (await pidIn(join(dataDir, "embedded")))!;
    expect(after).not.toBe(before);
    expect(isAlive(after)).toBe(true);
    // The instance made before the crash still works: its users survived in the ACL file.
    const app = await appClient(bindEnv(await api.bindApp("cache", "web")));
    expect(await app.set("cache:k", "v")).toBe("OK");
    app.destroy();
    expect(await health(provider.url)).toMatchObject({ status: 200 });
    expect(logs).toContainEqual(expect.objectContaining({ msg: "redis-server exited; restarting it", signal: "SIGKILL", server: "embedded" }));
    expect(logs).toContainEqual(expect.objectContaining({ msg: "redis-server restarted and answers", pid: after }));
  });

  it("restarts the registry's server after kill -9 too, without losing the write just made", async () => {
    const { dataDir, api } = await start();
    expect((await api.create("cache", "shared")).status).toBe(201);
    process.kill((await pidIn(join(dataDir, "registry")))!, "SIGKILL");
    await vi.waitFor(async () => expect((await api.status("cache")).status).toBe(204), { timeout: RESTART_MS, interval: 100 });
  });

  it("says in ?check=all which server does not answer, and keeps the registry when the tenants' server is frozen", async () => {
    const { provider, dataDir, api } = await start();
    expect((await api.create("db", "dedicated")).status).toBe(201);
    await vi.waitFor(async () => expect((await api.status("db")).status).toBe(204), { timeout: RESTART_MS, interval: 100 });
    const administered = (await pidIn(join(dataDir, "embedded")))!;
    process.kill(administered, "SIGSTOP"); // alive but silent: no restart can help, readiness must say so
    try {
      const report = await health(provider.url);
      expect(report.status).toBe(500);
      expect(report.text).toMatch(/^state store: WORKING \(.*\)\nadministered redis: fail - no answer within 5000 ms\n$/);
      // The registry is elsewhere: instances on other servers are still served.
      expect((await api.status("db")).status).toBe(204);
    } finally {
      process.kill(administered, "SIGCONT");
    }
    await vi.waitFor(async () => expect((await health(provider.url)).status).toBe(200), { timeout: 10_000 });
    expect((await api.destroy("db")).status).toBe(200);
  });

  it("stops a tenant storing past the shared server's maxmemory", async () => {
    const { api } = await start({ sharedMaxmemory: "4mb", sharedMaxmemoryPolicy: "noeviction" });
    expect((await api.create("big", "shared")).status).toBe(201);
    const app = await appClient(bindEnv(await api.bindApp("big", "web")));
    const chunk = "x".repeat(256 * 1024);
    let stored = 0;
    let refusal = "";
    for (let i = 0; i < 64 && refusal === ""; i++) {
      const result = await failure(app.set(`big:${i}`, chunk));
      if (result === "OK:OK") stored += chunk.length;
      else refusal = result;
    }
    app.destroy();
    expect(refusal).toMatch(/^OOM command not allowed when used memory > 'maxmemory'/);
    expect(stored).toBeLessThanOrEqual(4 * 1024 * 1024);
    // The provider's own work does not live there: another instance's calls still succeed.
    expect((await api.create("other", "dedicated")).status).toBe(201);
  });

  it("warns when one REDIS_URL serves both the registry and the tenants", async () => {
    const redis = await startRedisServer();
    redisServers.push(redis);
    const { logs } = await start({ redisUrl: redis.url });
    expect(logs).toContainEqual(expect.objectContaining({ level: 40, msg: expect.stringMatching(/^The registry shares its Redis server with the tenants.*Set REGISTRY_REDIS_URL/) }));
  });

  it("keeps the registry on REGISTRY_REDIS_URL, apart from REDIS_URL", async () => {
    const tenants = await startRedisServer();
    const registry = await startRedisServer();
    redisServers.push(tenants, registry);
    const { logs, api } = await start({ redisUrl: tenants.url, registryRedisUrl: registry.url });
    expect((await api.create("cache", "shared")).status).toBe(201);
    expect(logs.some((line) => String(line.msg).startsWith("The registry shares"))).toBe(false);
    const keysOn = async (server: RedisServer) => {
      const client = await appClient({ REDIS_URL: server.url });
      try {
        return await client.keys("_provider-kit:*");
      } finally {
        client.destroy();
      }
    };
    expect(await keysOn(registry)).toContain("_provider-kit:instance:cache");
    expect(await keysOn(tenants)).toEqual([]);
  });

  it("answers 503, not 500, on a shared instance while the tenants' server is away, and serves again once it is back", async () => {
    const tenants = await startRedisServer();
    const registry = await startRedisServer();
    redisServers.push(tenants, registry);
    const { api } = await start({ redisUrl: tenants.url, registryRedisUrl: registry.url });
    expect((await api.create("cache", "shared")).status).toBe(201);
    await tenants.stop();

    for (const answer of [await api.bindApp("cache", "web"), await api.info("cache"), await api.create("other", "shared")]) {
      expect(answer).toEqual({ status: 503, text: "The instance's Redis server does not answer right now; try again in a moment." });
    }
    expect((await api.status("cache")).status).toBe(500); // status keeps the contract's "down"

    const back = await startRedisServer({ port: tenants.port });
    redisServers.push(back);
    await vi.waitFor(async () => expect((await api.bindApp("cache", "web")).status).toBe(201), { timeout: RESTART_MS, interval: 200 });
  });

  it("serves the metrics without auth on METRICS_PORT, and not on the API", async () => {
    const { provider, api } = await start({ metricsPort: 0 });
    expect((await api.create("cache", "shared")).status).toBe(201);
    expect(provider.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    const answer = await fetch(provider.metricsUrl!);
    expect(answer.status).toBe(200);
    const metrics = parsePrometheusText(await answer.text());
    expect(metrics.value("provider_instances", { state: "ready" })).toBe(1);
    expect(metrics.value("provider_store_up")).toBe(1);
    const authorization = `Basic ${Buffer.from(`redis:${PASSWORD}`).toString("base64")}`;
    expect((await fetch(`${provider.url}/metrics`, { headers: { authorization } })).status).toBe(404);
  });
});
