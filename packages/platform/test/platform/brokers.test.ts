/**
 * Open Service Brokers on the local platform: the Redis example registered twice, natively and
 * as a broker (`/brokers`), an instance of each bound to one app, and the app reaching Redis
 * through each instance's variables; the broker's calls in the call timeline.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "../../../../test/support/redis-server.js";
import { eventually } from "../../../../test/support/eventually.js";
import { killServersUnder, tempDir } from "../../../../test/support/data-dirs.js";
import { PASSWORD, startTestProvider, testConfig } from "../../../../test/support/redis-example.js";
import type { RunningProvider } from "../../../../examples/redis/redis-provider.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { manifest, startTestPlatform, type TestPlatform } from "./helpers.js";

const BROKER = "redis-broker";
const SERVICE = `${BROKER}::redis`;

describe("brokers on the local platform", () => {
  let redis: RedisServer;
  let dataDir: string;
  let provider: RunningProvider;
  let t: TestPlatform;

  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = await tempDir("platform-broker");
    provider = await startTestProvider(testConfig({ dataDir, redisUrl: redis.url }));
    t = await startTestPlatform("memory");
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.close();
    await killServersUnder(dataDir);
    await redis?.stop();
  });

  const brokerBody = (password = PASSWORD) => ({ Name: BROKER, URL: provider.url, Config: { AuthConfig: { BasicAuthConfig: { Username: "redis", Password: password } } } });

  it("registers brokers for admins only, as the real platform: 201, 409, 204 when none, 404 for an unknown one", async () => {
    expect((await t.admin.get("/brokers")).status).toBe(204);
    const user = await t.admin.user("dana@example.com");
    expect((await user.post("/brokers", { json: brokerBody() })).status).toBe(403);
    expect((await t.admin.post("/brokers", { json: { ...brokerBody(), URL: "not a url" } })).status).toBe(400);
    // A wrong password first: the update below fixes it.
    await t.admin.ok(t.admin.post("/brokers", { json: brokerBody("wrong-password") }), 201);
    expect((await t.admin.post("/brokers", { json: brokerBody() })).status).toBe(409);
    await t.admin.ok(t.admin.put(`/brokers/${BROKER}`, { json: brokerBody() }));
    expect((await t.admin.put("/brokers/nope", { json: brokerBody() })).status).toBe(404);
    expect((await user.get("/brokers")).status).toBe(403);
    const listed = (await t.admin.ok(t.admin.get("/brokers"))).json<{ brokers: unknown[] }>();
    expect(listed.brokers).toEqual([
      {
        Name: BROKER,
        URL: provider.url,
        Config: { AuthConfig: { BasicAuthConfig: { Username: "redis", Password: "*****" }, BearerConfig: null }, Insecure: false, Context: null, CacheExpirationSeconds: 0 },
      },
    ]);
  });

  it("lists the broker's services as <broker>::<service> with their plans, to every user", async () => {
    await t.admin.ok(t.admin.post("/services", { text: manifest("redis", provider.url, { username: "redis", password: PASSWORD }) }));
    const services = (await t.admin.ok(t.admin.get("/services/instances"))).json<Array<{ service: string }>>().map((entry) => entry.service);
    expect(services).toEqual(expect.arrayContaining(["redis", SERVICE]));
    const user = await t.admin.login("dana@example.com", "user-password");
    expect((await user.ok(user.get("/services/instances"))).json<Array<{ service: string }>>().map((entry) => entry.service)).toContain(SERVICE);
    const plans = (await t.admin.ok(t.admin.get(`/services/${SERVICE}/plans`))).json<Array<{ name: string }>>();
    expect(plans.map((plan) => plan.name)).toEqual(["shared", "dedicated"]);
    expect((await t.admin.get(`/services/${BROKER}::nope/plans`)).status).toBe(404);
  });

  it("binds a native instance and a broker's to one app: the app reaches Redis through each", async () => {
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "native", service_name: "redis", plan: "shared" } }), 201);
    // The dedicated plan provisions in the background: the platform polls last_operation for the status.
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "brokered", service_name: SERVICE, plan: "dedicated" } }), 201);
    await eventually(async () => (await t.admin.get("/services/instances/brokered/status")).text.startsWith('Service instance "brokered" is succeeded'));

    await t.admin.ok(t.admin.put("/services/instances/native/web"));
    const brokered = (await t.admin.ok(t.admin.put("/services/instances/brokered/web"))).json<Record<string, string>>();
    expect(Object.keys(brokered)).toEqual(expect.arrayContaining(["REDIS_URL", "REDIS_PASSWORD"]));

    const run = async (command: string) => (await t.admin.ok(t.admin.post("/apps/web/run?once=true", { text: command }))).text.trim();
    const services = JSON.parse(await run('printf %s "$TSURU_SERVICES"')) as Record<string, Array<{ instance_name: string; envs: Record<string, string> }>>;
    expect(Object.keys(services).sort()).toEqual(["redis", SERVICE].sort());
    for (const [service, instance] of [["redis", "native"], [SERVICE, "brokered"]] as const) {
      const [entry] = services[service]!;
      expect(entry!.instance_name).toBe(instance);
      // Each instance's own credentials: a key written through one is the app's own under that instance.
      const url = entry!.envs.REDIS_URL!;
      const prefix = entry!.envs.REDIS_KEY_PREFIX ?? "";
      expect(await run(`redis-cli --no-auth-warning -u '${url}' set '${prefix}greeting' '${instance}'`)).toBe("OK");
      expect(await run(`redis-cli --no-auth-warning -u '${url}' get '${prefix}greeting'`)).toBe(instance);
    }

    const calls = (await t.admin.ok(t.admin.get(`/provider-calls?service=${encodeURIComponent(SERVICE)}`))).json<ProviderCall[]>();
    const routes = calls.map((call) => `${call.method} ${call.path.replace(/[0-9a-f-]{36}/g, "<id>").split("?")[0]} ${call.status}`);
    expect(routes).toEqual(
      expect.arrayContaining(["PUT /v2/service_instances/<id> 202", "GET /v2/service_instances/<id>/last_operation 200", "PUT /v2/service_instances/<id>/service_bindings/<id> 201"]),
    );
    const bindCall = calls.find((call) => call.path.includes("/service_bindings/"))!;
    // The timeline keeps the shape of the credentials, never their values.
    expect(bindCall.answer).not.toContain(brokered.REDIS_PASSWORD);
    expect(bindCall.requestHeaders).toMatchObject({ "X-Broker-API-Version": "2.17", Authorization: "Basic <redacted>" });
  });

  it("unbinds and deprovisions through the broker, then removes the broker", async () => {
    await t.admin.ok(t.admin.delete("/services/instances/brokered/web"));
    await t.admin.ok(t.admin.delete("/services/instances/brokered"));
    const calls = (await t.admin.ok(t.admin.get(`/provider-calls?service=${encodeURIComponent(SERVICE)}`))).json<ProviderCall[]>();
    const deletes = calls.filter((call) => call.method === "DELETE").map((call) => `${call.path.replace(/[0-9a-f-]{36}/g, "<id>").split("?")[0]} ${call.status}`);
    expect(deletes).toEqual(["/v2/service_instances/<id>/service_bindings/<id> 200", expect.stringMatching(/^\/v2\/service_instances\/<id> 20[02]$/)]);
    const env = (await t.admin.ok(t.admin.post("/apps/web/run?once=true", { text: 'printf %s "$TSURU_SERVICES"' }))).text;
    expect(Object.keys(JSON.parse(env) as object)).toEqual(["redis"]);
    await t.admin.ok(t.admin.delete(`/brokers/${BROKER}`));
    expect((await t.admin.delete(`/brokers/${BROKER}`)).status).toBe(404);
    expect((await t.admin.get(`/services/${SERVICE}/plans`)).status).toBe(404);
  });
});
