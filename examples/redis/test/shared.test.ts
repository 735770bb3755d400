/**
 * Plan `shared` through HTTP, as the platform and its apps see it: a real provider on a real
 * redis-server, apps connecting with the env their bind returned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appClient, bindEnv, eventually, failure, startSharedSetup, type SharedSetup } from "./support.js";

describe("plan shared over HTTP", () => {
  let setup: SharedSetup;
  let redis: SharedSetup["redis"];
  let api: SharedSetup["api"];
  let admin: SharedSetup["admin"];
  const connect = (env: Record<string, string>) => setup.connect(env);

  beforeAll(async () => {
    setup = await startSharedSetup("shared");
    ({ redis, api, admin } = setup);
  });

  afterAll(() => setup?.stop());

  const usersOf = async (instance: string) => (await admin.aclUsers()).filter((user) => user.startsWith(`${instance}.`));

  it("lists both plans", async () => {
    const answer = await api.plans();
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.text) as Array<{ name: string }>).map((plan) => plan.name)).toEqual(["shared", "dedicated"]);
  });

  it("creates, binds, serves an app under its prefix, informs, unbinds and destroys", async () => {
    expect((await api.create("cache", "shared")).status).toBe(201);
    expect((await api.status("cache")).status).toBe(204);

    const env = bindEnv(await api.bindApp("cache", "web"));
    expect(Object.keys(env).sort()).toEqual(
      ["REDIS_HOST", "REDIS_KEY_PREFIX", "REDIS_PASSWORD", "REDIS_PORT", "REDIS_URL", "REDIS_USER"].sort(),
    );
    expect(env.REDIS_KEY_PREFIX).toBe("cache:");
    expect(env.REDIS_PORT).toBe(String(redis.port));

    const web = await connect(env);
    await web.set(`${env.REDIS_KEY_PREFIX}greeting`, "hello");
    expect(await web.get(`${env.REDIS_KEY_PREFIX}greeting`)).toBe("hello");
    expect(await failure(web.set("greeting", "outside the prefix"))).toMatch(/^NOPERM/);

    const info = JSON.parse((await api.info("cache")).text) as Array<{ label: string; value: string }>;
    expect(info).toEqual(
      expect.arrayContaining([
        { label: "Plan", value: "shared" },
        { label: "Key prefix", value: "cache:" },
        { label: "Keys", value: "1" },
      ]),
    );

    expect((await api.unbindApp("cache", "web")).status).toBe(200);
    expect((await api.destroy("cache")).status).toBe(200);
    expect(await admin.keys("cache:*")).toEqual([]);
    expect(await usersOf("cache")).toEqual([]);
    expect((await api.status("cache")).status).toBe(404);
  });

  it("keeps instances apart and denies what would escape the prefix", async () => {
    await api.create("orders", "shared");
    await api.create("sessions", "shared");
    const orders = await connect(bindEnv(await api.bindApp("orders", "shop")));
    const sessions = await connect(bindEnv(await api.bindApp("sessions", "login")));
    await sessions.set("sessions:token", "secret");

    expect(await failure(orders.get("sessions:token"))).toMatch(/^NOPERM/);
    expect(await failure(orders.sendCommand(["SUBSCRIBE", "sessions:events"]))).toMatch(/^NOPERM/);
    expect(await orders.publish("orders:events", "paid")).toBe(0);
    // Commands that act on or list the whole server.
    for (const command of [
      ["FLUSHALL"],
      ["FLUSHDB"],
      ["CONFIG", "GET", "*"],
      ["ACL", "SETUSER", "intruder", "on", ">pw", "~*", "+@all"],
      ["KEYS", "*"],
      ["SCAN", "0"],
      ["RANDOMKEY"],
      ["SELECT", "1"],
      ["CLIENT", "TRACKING", "on", "BCAST"],
      ["SHUTDOWN"],
    ]) {
      expect(await failure(orders.sendCommand(command)), command.join(" ")).toMatch(/^NOPERM/);
    }
    expect(await sessions.get("sessions:token")).toBe("secret");

    await api.destroy("orders");
    // Destroying one instance leaves the other's keys and users alone.
    expect(await admin.get("sessions:token")).toBe("secret");
    expect(await usersOf("sessions")).toEqual(["sessions.app.login", "sessions.health"]);
    await api.destroy("sessions");
  });

  it("cuts off only the unbound app; a second bind gives fresh credentials", async () => {
    await api.create("queue", "shared");
    const webEnv = bindEnv(await api.bindApp("queue", "web"));
    const workerEnv = bindEnv(await api.bindApp("queue", "worker"));
    expect(webEnv.REDIS_USER).not.toBe(workerEnv.REDIS_USER);
    const web = await connect(webEnv);
    const worker = await connect(workerEnv);
    await web.rPush("queue:jobs", "job-1");

    expect((await api.unbindApp("queue", "web")).status).toBe(200);
    // Redis closes the unbound user's connections; new ones are refused.
    await eventually(() => !web.isOpen || failure(web.ping()).then((message) => message !== "OK:PONG"));
    expect(await failure(appClient(webEnv))).toMatch(/WRONGPASS/);
    expect(await worker.lPop("queue:jobs")).toBe("job-1");

    const again = bindEnv(await api.bindApp("queue", "worker"));
    expect(again.REDIS_USER).toBe(workerEnv.REDIS_USER);
    expect(again.REDIS_PASSWORD).not.toBe(workerEnv.REDIS_PASSWORD);
    expect(await failure(appClient(workerEnv))).toMatch(/WRONGPASS/);
    expect(await (await connect(again)).ping()).toBe("PONG");

    // Unbinding an app that is already gone succeeds (the platform sends compensating calls).
    expect((await api.unbindApp("queue", "web")).status).toBe(200);
    await api.destroy("queue");
    expect(await usersOf("queue")).toEqual([]);
    expect(await admin.keys("queue:*")).toEqual([]);
  });

  it("binds units, jobs and Variant B hostnames with their own users", async () => {
    await api.create("jobs", "shared");
    const unit = bindEnv(await api.bindUnit("jobs", "web", "10.0.0.7:8080"));
    const job = bindEnv(await api.bindJob("jobs", "nightly"));
    const legacy = bindEnv(await api.bindHostname("jobs", "legacy.example.com"));
    expect(new Set([unit.REDIS_USER, job.REDIS_USER, legacy.REDIS_USER]).size).toBe(3);
    for (const env of [unit, job, legacy]) {
      const client = await connect(env);
      await client.set(`jobs:${env.REDIS_USER}`, "1");
    }
    expect((await api.unbindUnit("jobs", "web", "10.0.0.7:8080")).status).toBe(200);
    expect(await failure(appClient(unit))).toMatch(/WRONGPASS/);
    expect(await (await connect(job)).ping()).toBe("PONG");
    expect((await api.unbindHostname("jobs", "legacy.example.com")).status).toBe(200);
    expect(await failure(appClient(legacy))).toMatch(/WRONGPASS/);
    await api.destroy("jobs");
    expect(await usersOf("jobs")).toEqual([]);
  });

  it("reports an instance whose health user is gone as down", async () => {
    await api.create("broken", "shared");
    await admin.aclDelUser("broken.health");
    const answer = await api.status("broken");
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/does not accept this instance's connections/);
    await api.destroy("broken");
  });

  it("reports an instance down when its health user no longer has the password the registry holds", async () => {
    await api.create("rekeyed", "shared");
    expect((await api.status("rekeyed")).status).toBe(204);
    await admin.aclSetUser("rekeyed.health", ["resetpass", ">not-the-registry-one"]);
    const answer = await api.status("rekeyed");
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/does not accept this instance's connections/);
    await api.destroy("rekeyed");
  });

  it("keeps its connections to Redis, and answers status of the others, when an instance is destroyed right after its status", async () => {
    const accepted = async () => Number(/total_connections_received:(\d+)/.exec(await admin.info("stats"))?.[1]);
    await api.create("stays", "shared");
    const before = await accepted();
    for (let round = 0; round < 3; round++) {
      await api.create(`goes${round}`, "shared");
      expect((await api.status(`goes${round}`)).status).toBe(204);
      expect((await api.destroy(`goes${round}`)).status).toBe(200);
      expect((await api.status("stays")).status).toBe(204);
    }
    // Redis disconnects whoever is logged in as a user it deletes: the status check never stays so.
    expect(await accepted()).toBe(before);
    await api.destroy("stays");
  });

  it("refuses an unknown plan with the plans it has", async () => {
    const answer = await api.create("typo", "huge");
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/Unknown plan "huge".*shared, dedicated/);
    expect((await api.status("typo")).status).toBe(404);
  });
});
