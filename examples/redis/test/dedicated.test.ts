/**
 * Plan `dedicated` through HTTP: a real provider starting real redis-server processes.
 * The servers start through a wrapper that waits two seconds first, so the pending phase
 * (202 on status, 412 on bind) is observable and a provider restart can land in the middle of it.
 */
import { stat } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import type { Config } from "../config.js";
import { RedisStore } from "@provider-kit/redis-store";
import { REGISTRY_KEY_PREFIX, type RunningProvider } from "../redis-provider.js";
import { runningPid } from "@provider-kit/platform/redis-server";
import {
  appClient,
  appClients,
  bindEnv,
  eventually,
  failure,
  instanceDir,
  isAlive,
  killServersUnder,
  pidIn,
  platform,
  slowRedisServer,
  startTestProvider,
  tempDir,
  testConfig,
  undeletableEntry,
} from "./support.js";

describe("plan dedicated over HTTP", () => {
  let redis: RedisServer;
  let dataDir: string;
  let config: Config;
  let provider: RunningProvider;
  let api: ReturnType<typeof platform>;
  const { connect, closeAll } = appClients();
  const restartProvider = async () => {
    await provider.close();
    provider = await startTestProvider(config);
    api = platform(provider.url);
  };
  const ready = (instance: string) => eventually(async () => (await api.status(instance)).status === 204);

  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = await tempDir("dedicated");
    config = testConfig({ dataDir, redisUrl: redis.url, redisServer: await slowRedisServer(dataDir, 2) });
    provider = await startTestProvider(config);
    api = platform(provider.url);
  });

  afterAll(async () => {
    closeAll();
    await provider?.close();
    await killServersUnder(dataDir);
    await redis?.stop();
  });

  it("provisions in the background: 202 then 204 on status, 412 then 201 on bind", async () => {
    expect((await api.create("db", "dedicated")).status).toBe(201);
    expect((await api.status("db")).status).toBe(202);
    const early = await api.bindApp("db", "web");
    expect(early.status).toBe(412);
    const pendingInfo = await api.info("db");
    expect(pendingInfo.status).toBe(200);
    expect(pendingInfo.text).toContain('"unknown (the server does not answer) of 64mb"');
    await ready("db");

    const env = bindEnv(await api.bindApp("db", "web"));
    expect(env.REDIS_HOST).toBe("127.0.0.1");
    expect(env).not.toHaveProperty("REDIS_KEY_PREFIX");
    const web = await connect(env);
    await web.set("anything", "goes");
    expect(await web.get("anything")).toBe("goes");
    await web.flushDb(); // the app's own server: allowed
    // Scripting too, denied on shared: a busy script here only slows the app's own server.
    expect(await web.sendCommand(["EVAL", "return redis.call('SET', KEYS[1], 'scripted')", "1", "from-lua"])).toBe("OK");
    expect(await web.getDel("from-lua")).toBe("scripted");
    expect(await failure(web.configSet("maxmemory", "1gb"))).toMatch(/^NOPERM/);
    expect(await failure(web.sendCommand(["ACL", "SETUSER", "intruder", "on", ">pw", "+@all"]))).toMatch(/^NOPERM/);

    const info = JSON.parse((await api.info("db")).text) as Array<{ label: string; value: string }>;
    expect(info).toEqual(
      expect.arrayContaining([
        { label: "Plan", value: "dedicated" },
        { label: "Address", value: `127.0.0.1:${env.REDIS_PORT}` },
        { label: "Keys", value: "0" },
      ]),
    );
    expect(info.find((item) => item.label === "Memory used")?.value).toMatch(/ of 64mb$/);
    await api.destroy("db");
  });

  it("gives each app its own user: unbinding one leaves the other working", async () => {
    await api.create("pair", "dedicated");
    await ready("pair");
    const webEnv = bindEnv(await api.bindApp("pair", "web"));
    const workerEnv = bindEnv(await api.bindApp("pair", "worker"));
    const web = await connect(webEnv);
    const worker = await connect(workerEnv);
    await web.set("shared-by-both", "1");

    expect((await api.unbindApp("pair", "web")).status).toBe(200);
    await eventually(() => !web.isOpen || failure(web.ping()).then((message) => message !== "OK:PONG"));
    expect(await failure(appClient(webEnv))).toMatch(/WRONGPASS/);
    expect(await worker.get("shared-by-both")).toBe("1");
    await api.destroy("pair");
  });

  it("destroy leaves no process and no folder behind", async () => {
    await api.create("gone", "dedicated");
    await ready("gone");
    const dir = instanceDir(dataDir, "gone");
    const pid = (await runningPid(dir))!;
    const env = bindEnv(await api.bindApp("gone", "web"));

    expect((await api.destroy("gone")).status).toBe(200);
    expect(isAlive(pid)).toBe(false);
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
    expect(await failure(appClient(env))).toMatch(/ECONNREFUSED/);
    expect((await api.status("gone")).status).toBe(404);
  });

  it("keeps a destroy that fails after stopping the process as deleting, then failed; a later destroy finishes it", async (context) => {
    await api.create("stuck", "dedicated");
    await ready("stuck");
    const dir = instanceDir(dataDir, "stuck");
    const pid = (await runningPid(dir))!;
    const unlock = await undeletableEntry(dir);
    if (unlock === undefined) return context.skip("cannot make a file undeletable here (tmpfs as root)");
    try {
      expect((await api.destroy("stuck")).status).toBe(200);
      expect(isAlive(pid)).toBe(false);
      // The record says what is going on: being removed, and after the last retry, why it failed.
      const first = await api.status("stuck");
      expect(first.status).toBe(500);
      expect(first.text).toMatch(/being removed|Removal failed/);
      await eventually(async () => /Removal failed after \d+ attempt/.test((await api.status("stuck")).text));
      expect((await api.bindApp("stuck", "web")).status).not.toBe(201);
    } finally {
      await unlock();
    }
    expect((await api.destroy("stuck")).status).toBe(200);
    expect((await api.status("stuck")).status).toBe(404);
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  });

  it("reuses one connection for status, binds and info instead of opening one per call", async () => {
    await api.create("reused", "dedicated");
    await ready("reused");
    const app = await connect(bindEnv(await api.bindApp("reused", "web")));
    const accepted = async () => Number(/total_connections_received:(\d+)/.exec(await app.info("stats"))?.[1]);
    const before = await accepted();
    const statuses = await Promise.all(Array.from({ length: 30 }, () => api.status("reused")));
    expect(statuses.map((answer) => answer.status)).toEqual(Array(30).fill(204));
    bindEnv(await api.bindApp("reused", "worker"));
    expect((await api.info("reused")).status).toBe(200);
    expect(await accepted()).toBe(before);
    await api.destroy("reused");
  });

  it("removes an instance destroyed while it was still provisioning", async () => {
    expect((await api.create("hasty", "dedicated")).status).toBe(201);
    const dir = instanceDir(dataDir, "hasty");
    await eventually(async () => (await pidIn(dir)) !== undefined); // spawned, still starting
    const pid = (await pidIn(dir))!;
    expect((await api.destroy("hasty")).status).toBe(200);
    await eventually(async () => (await api.status("hasty")).status === 404);
    expect(isAlive(pid)).toBe(false);
    await expect(stat(dir)).rejects.toThrow(/ENOENT/);
  });

  it("finishes a provisioning that a provider restart interrupted", async () => {
    expect((await api.create("takeover", "dedicated")).status).toBe(201);
    const dir = instanceDir(dataDir, "takeover");
    // Mid-step: the process is spawned (still in its slow start) when the provider goes away.
    await eventually(async () => (await pidIn(dir)) !== undefined);
    const pid = await pidIn(dir);
    await restartProvider();

    expect((await api.status("takeover")).status).toBe(202);
    await ready("takeover");
    // The new provider adopted the process the old one started rather than starting another.
    expect(await pidIn(dir)).toBe(pid);
    const app = await connect(bindEnv(await api.bindApp("takeover", "web")));
    expect(await app.ping()).toBe("PONG");
    await api.destroy("takeover");
  });

  it("keeps serving apps while the provider restarts, and restarts a dead instance at start-up", async () => {
    await api.create("durable", "dedicated");
    await ready("durable");
    const env = bindEnv(await api.bindApp("durable", "web"));
    const app = await connect(env);
    await app.set("survives", "yes");
    const dir = instanceDir(dataDir, "durable");

    await provider.close();
    expect(await app.get("survives")).toBe("yes"); // provider down, instance up

    process.kill((await runningPid(dir))!, "SIGKILL");
    provider = await startTestProvider(config);
    api = platform(provider.url);
    // No call needed: start-up restarts it; the app's credentials and data are still there.
    await eventually(async () => (await failure(appClient(env).then((client) => client.get("survives").finally(() => client.destroy())))) === "OK:yes");
    await api.destroy("durable");
  });

  it("restarts a dedicated process that died when status finds it down", async () => {
    await api.create("phoenix", "dedicated");
    await ready("phoenix");
    const env = bindEnv(await api.bindApp("phoenix", "web"));
    const dir = instanceDir(dataDir, "phoenix");
    const pid = (await runningPid(dir))!;
    process.kill(pid, "SIGKILL");
    await eventually(() => !isAlive(pid));

    const down = await api.status("phoenix");
    expect(down.status).toBe(500);
    expect(down.text).toMatch(/was not running; it is being restarted/);
    await ready("phoenix");
    expect(await (await connect(env)).ping()).toBe("PONG");
    await api.destroy("phoenix");
  });

  it("removes at start-up a folder whose instance the registry no longer has", async () => {
    await api.create("orphan", "dedicated");
    await ready("orphan");
    const dir = instanceDir(dataDir, "orphan");
    const pid = (await runningPid(dir))!;
    await provider.close();
    // As if the provider died between removing the record and the process.
    const store = new RedisStore({ url: redis.url, keyPrefix: REGISTRY_KEY_PREFIX });
    await store.withLock("orphan", 5_000, (held) => held.deleteInstance());
    await store.close();

    provider = await startTestProvider(config);
    api = platform(provider.url);
    await eventually(async () => !isAlive(pid) && (await stat(dir).then(() => false, () => true)));
  });
});
