/**
 * The Redis provider as an Open Service Broker: `/v2` on the same port with the same credentials,
 * both plans (the dedicated one in the background), and an app reaching Redis with the
 * credentials of each binding, next to a native instance bound to the same app.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { REDIS_BROKER } from "../broker.js";
import type { RunningProvider } from "../redis-provider.js";
import { appClients, bindEnv, broker, eventually, killServersUnder, platform, startTestProvider, tempDir, testConfig } from "./support.js";

const { serviceId, planIds } = REDIS_BROKER;

describe("the Redis provider as a broker", () => {
  let redis: RedisServer;
  let dataDir: string;
  let provider: RunningProvider;
  let osb: ReturnType<typeof broker>;
  const { connect, closeAll } = appClients();

  const provisionBody = (plan: keyof typeof planIds) => ({ service_id: serviceId, plan_id: planIds[plan], organization_guid: "team-a", space_guid: "team-a" });
  const bindBody = (plan: keyof typeof planIds) => ({ service_id: serviceId, plan_id: planIds[plan], bind_resource: { app_guid: "web" } });

  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = await tempDir("broker");
    provider = await startTestProvider(testConfig({ dataDir, redisUrl: redis.url }));
    osb = broker(provider.url);
  });
  afterAll(async () => {
    closeAll();
    await provider?.close();
    await killServersUnder(dataDir);
    await redis?.stop();
  });

  it("lists both plans in its catalog", async () => {
    const { status, body } = await osb("GET", "/v2/catalog");
    expect(status).toBe(200);
    expect(body).toMatchObject({
      services: [{ id: serviceId, name: "redis", bindable: true, plans: [{ id: planIds.shared, name: "shared" }, { id: planIds.dedicated, name: "dedicated" }] }],
    });
  });

  it("provisions a shared instance at once and binds it: the app reaches Redis with the credentials", async () => {
    const instance = "/v2/service_instances/8f0e2d1c-0000-4000-8000-000000000001";
    expect((await osb("PUT", instance, provisionBody("shared"))).status).toBe(201);
    const bound = await osb("PUT", `${instance}/service_bindings/8f0e2d1c-0000-4000-8000-0000000000b1`, bindBody("shared"));
    expect(bound.status).toBe(201);
    const app = await connect(bound.body.credentials as Record<string, string>);
    await app.set(`${(bound.body.credentials as Record<string, string>).REDIS_KEY_PREFIX}greeting`, "hello");
    // The same app bound to a native instance too: each binding has its own user and keys.
    const api = platform(provider.url);
    expect((await api.create("cache1", "shared")).status).toBe(201);
    const nativeEnv = bindEnv(await api.bindApp("cache1", "web"));
    const native = await connect(nativeEnv);
    expect(await native.get(`${nativeEnv.REDIS_KEY_PREFIX}greeting`)).toBeNull();
    expect(await app.get(`${(bound.body.credentials as Record<string, string>).REDIS_KEY_PREFIX}greeting`)).toBe("hello");
  });

  it("provisions a dedicated instance in the background only for a platform that polls, then binds it", async () => {
    const instance = "/v2/service_instances/8f0e2d1c-0000-4000-8000-000000000002";
    expect(await osb("PUT", instance, provisionBody("dedicated"))).toMatchObject({ status: 422, body: { error: "AsyncRequired" } });
    expect(await osb("PUT", `${instance}?accepts_incomplete=true`, provisionBody("dedicated"))).toMatchObject({
      status: 202,
      body: { operation: "provision" },
    });
    await eventually(async () => (await osb("GET", `${instance}/last_operation?operation=provision`)).body.state === "succeeded");
    const binding = `${instance}/service_bindings/8f0e2d1c-0000-4000-8000-0000000000b2`;
    const bound = await osb("PUT", binding, bindBody("dedicated"));
    expect(bound.status).toBe(201);
    const app = await connect(bound.body.credentials as Record<string, string>);
    expect(await app.ping()).toBe("PONG");
    const query = `service_id=${serviceId}&plan_id=${planIds.dedicated}`;
    expect((await osb("DELETE", `${binding}?${query}`)).status).toBe(200);
    expect((await osb("DELETE", `${instance}?accepts_incomplete=true&${query}`)).status).toBe(200);
    expect((await osb("DELETE", `${instance}?${query}`)).status).toBe(410);
  });
});
