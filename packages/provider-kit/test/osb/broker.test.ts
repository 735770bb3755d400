/**
 * The OSB routes over real HTTP on loopback, on a MemoryStore; the background path on a RedisStore
 * on a real redis-server too (broker-redis.test.ts).
 */
import { describe, expect, it } from "vitest";
import { UNPRINTED } from "../../../../test/support/unprinted.js";
import { MemoryStore, ProviderError } from "../../src/index.js";
import { eventually } from "../../../../test/support/eventually.js";
import { gate } from "../../../../test/support/gate.js";
import { AUTH_HEADER, fakeService, OSB, PLAN_IDS, provisionBody, query, SERVICE_ID, useBrokers } from "./helpers.js";

const start = useBrokers();
const INSTANCE = "/v2/service_instances/5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60";
const BINDING = `${INSTANCE}/service_bindings/9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d`;

function expectOsbError(answer: { status: number; body: Record<string, unknown> }, status: number, error: string) {
  expect(answer.status).toBe(status);
  expect(answer.body).toEqual({ error, description: expect.any(String) });
  expect(answer.body.description).not.toBe("");
}

describe("catalog", () => {
  it("lists the service with the plans handler's plans and their configured ids", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    const { status, body } = await broker.call("GET", "/v2/catalog");
    expect(status).toBe(200);
    expect(body).toEqual({
      services: [
        {
          id: SERVICE_ID,
          name: "fake-redis",
          description: "A fake Redis.",
          tags: [],
          bindable: true,
          instances_retrievable: true,
          bindings_retrievable: true,
          plan_updateable: true,
          plans: [
            { id: PLAN_IDS.shared, name: "shared", description: "A key prefix on a shared server." },
            { id: PLAN_IDS.dedicated, name: "dedicated", description: "A server of its own." },
          ],
        },
      ],
    });
  });

  it("answers 500 with an OSB body naming the plan that has no id", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore(), { osb: { ...OSB, planIds: { shared: PLAN_IDS.shared } } });
    expectOsbError(await broker.call("GET", "/v2/catalog"), 500, "InternalError");
  });

  it("is behind the provider's auth", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expect((await broker.call("GET", "/v2/catalog", undefined, { Authorization: undefined })).status).toBe(401);
  });
});

describe("X-Broker-API-Version", () => {
  it("answers 412 with an OSB error body below 2.13, above 2.x and without the header", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    for (const version of ["2.12", "1.99", "3.0", "two", undefined]) {
      expectOsbError(await broker.call("GET", "/v2/catalog", undefined, { "X-Broker-API-Version": version }), 412, "PreconditionFailed");
    }
    expect((await broker.call("GET", "/v2/catalog", undefined, { "X-Broker-API-Version": "2.13" })).status).toBe(200);
  });
});

describe("provisioning", () => {
  it("answers 201 for a new instance, 200 for the identical request, 409 for another plan, parameters, organization or space", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    const body = provisionBody("shared", { parameters: { maxmemory: "64mb", tls: { enabled: true } } });
    expect(await broker.call("PUT", INSTANCE, body)).toMatchObject({ status: 201, body: {} });
    expect(await broker.call("PUT", INSTANCE, body)).toMatchObject({ status: 200, body: {} });
    expectOsbError(await broker.call("PUT", INSTANCE, { ...body, parameters: { maxmemory: "128mb" } }), 409, "Conflict");
    expectOsbError(await broker.call("PUT", INSTANCE, { ...body, plan_id: PLAN_IDS.dedicated }), 409, "Conflict");
    expectOsbError(await broker.call("PUT", INSTANCE, { ...body, organization_guid: "another-org" }), 409, "Conflict");
    expectOsbError(await broker.call("PUT", INSTANCE, { ...body, space_guid: "another-space" }), 409, "Conflict");
    // One create reached the handler, with the native request's shape.
    expect(seen.filter((call) => call.handler === "create").map((call) => call.request)).toEqual([
      {
        instance: "osb:5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60",
        plan: "shared",
        team: "org-1",
        tags: [],
        parameters: { maxmemory: "64mb", tls: { enabled: "true" } },
      },
    ]);
  });

  it("answers 400 with an OSB body for another service, an unknown plan or a malformed id", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expectOsbError(await broker.call("PUT", INSTANCE, { ...provisionBody("shared"), service_id: "other" }), 400, "BadRequest");
    expectOsbError(await broker.call("PUT", INSTANCE, { ...provisionBody("shared"), plan_id: "nope" }), 400, "BadRequest");
    expectOsbError(await broker.call("PUT", "/v2/service_instances/a%20b", provisionBody("shared")), 400, "BadRequest");
  });

  it("answers 202 with an operation for a background create, and last_operation goes from in progress to succeeded", async () => {
    const { handlers, provisioned } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    const accepted = await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"));
    expect(accepted).toMatchObject({ status: 202, body: { operation: "provision" } });
    const polled = `${INSTANCE}/last_operation?operation=provision&${query("dedicated")}`;
    expect(await broker.call("GET", polled)).toMatchObject({ status: 200, body: { state: "in progress", description: expect.any(String) } });
    // Sent again while it provisions: 202 again, never 200.
    expect(await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).toMatchObject({ status: 202 });
    provisioned.open();
    await eventually(async () => (await broker.call("GET", polled)).body.state === "succeeded");
    expect(await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).toMatchObject({ status: 200 });
  });

  it("describes an operation in progress with the step's latest progress message", async () => {
    const reported = gate();
    const finish = gate();
    const { handlers } = fakeService({
      provision: async (_record, ctx) => {
        await ctx.progress("restoring snapshot, 40%");
        reported.open();
        await finish.opened;
      },
    });
    const broker = await start(handlers, new MemoryStore());
    try {
      expect((await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).status).toBe(202);
      await reported.opened;
      expect((await broker.call("GET", `${INSTANCE}/last_operation?operation=provision`)).body).toEqual({
        state: "in progress",
        description: "restoring snapshot, 40%",
      });
    } finally {
      finish.open();
    }
  });

  it("describes it with the progress message made printable: no control, bidi or zero-width character, at most 200 characters", async () => {
    const reported = gate();
    const finish = gate();
    const { handlers } = fakeService({
      provision: async (_record, ctx) => {
        await ctx.progress(`\u001b[2J\u0007\u009b31m\u202Eevil\u200B\u200D\uFEFF ${"y".repeat(300)}`);
        reported.open();
        await finish.opened;
      },
    });
    const broker = await start(handlers, new MemoryStore());
    try {
      expect((await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).status).toBe(202);
      await reported.opened;
      const { body } = await broker.call("GET", `${INSTANCE}/last_operation?operation=provision`);
      expect(body.state).toBe("in progress");
      const description = String(body.description);
      expect(description).not.toMatch(UNPRINTED);
      expect(description.startsWith("\\u001b[2J\\u0007\\u009b31m\\u202eevil\\u200b\\u200d\\ufeff yyy")).toBe(true);
      expect(description.length).toBe(200);
    } finally {
      finish.open();
    }
  });

  it("answers 422 AsyncRequired for a plan of asyncPlans without accepts_incomplete, before calling create", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore(), { osb: { ...OSB, asyncPlans: ["dedicated"] } });
    expectOsbError(await broker.call("PUT", INSTANCE, provisionBody("dedicated")), 422, "AsyncRequired");
    expect(seen).toEqual([]);
    // Never made: not found (410 is only for a removal that ended).
    expect((await broker.call("GET", `${INSTANCE}/last_operation`)).status).toBe(404);
  });

  it("answers 422 AsyncRequired when create goes to the background unannounced, and removes what it made", async () => {
    const { handlers, provisioned, seen } = fakeService();
    const store = new MemoryStore();
    const broker = await start(handlers, store);
    expectOsbError(await broker.call("PUT", INSTANCE, provisionBody("dedicated")), 422, "AsyncRequired");
    provisioned.open();
    await eventually(async () => (await store.getInstance("osb:5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60")) === undefined);
    expect(seen.map((call) => call.handler)).toEqual(["create", "destroy"]);
  });

  it("reports a provision that failed for good as failed, with the reason", async () => {
    const { handlers } = fakeService({
      provision: () => {
        throw new ProviderError("the disk is full");
      },
    });
    const broker = await start(handlers, new MemoryStore(), { registry: { store: new MemoryStore(), maxStepAttempts: 1, pollIntervalMs: 50 } });
    expect((await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).status).toBe(202);
    const last = await eventually(async () => {
      const answer = await broker.call("GET", `${INSTANCE}/last_operation?operation=provision`);
      return answer.body.state === "failed" && answer;
    });
    expect(last.body.description).toContain("the disk is full");
  });
});

describe("fetching, updating and deprovisioning", () => {
  it("fetches an instance: 200 with its plan and parameters, 404 when there is none", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expectOsbError(await broker.call("GET", INSTANCE), 404, "NotFound");
    await broker.call("PUT", INSTANCE, provisionBody("shared", { parameters: { size: 2 } }));
    expect(await broker.call("GET", INSTANCE)).toMatchObject({
      status: 200,
      body: { service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, parameters: { size: "2" } },
    });
  });

  it("updates the plan through the update handler: 200 {}", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    await broker.call("PUT", INSTANCE, provisionBody("shared", { parameters: { size: 2 } }));
    expect(await broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, plan_id: PLAN_IDS.dedicated })).toMatchObject({ status: 200, body: {} });
    expect(seen.find((call) => call.handler === "update")?.request).toMatchObject({ plan: "dedicated", parameters: { size: "2" } });
    expect((await broker.call("GET", INSTANCE)).body.plan_id).toBe(PLAN_IDS.dedicated);
  });

  it("deprovisions: 200 {}, then 410 Gone for the instance that is no more", async () => {
    const { handlers } = fakeService();
    const store = new MemoryStore();
    const broker = await start(handlers, store);
    expect(await broker.call("DELETE", `${INSTANCE}?${query("shared")}`)).toMatchObject({ status: 410, body: {} });
    await broker.call("PUT", INSTANCE, provisionBody("shared"));
    expect(await broker.call("DELETE", `${INSTANCE}?${query("shared")}`)).toMatchObject({ status: 200, body: {} });
    expect(await store.getInstance("osb:5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60")).toBeUndefined();
    expect(await broker.call("DELETE", `${INSTANCE}?${query("shared")}`)).toMatchObject({ status: 410, body: {} });
    expect((await broker.call("GET", `${INSTANCE}/last_operation?operation=deprovision`)).status).toBe(410);
  });
});

describe("bindings", () => {
  const bindBody = { service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, bind_resource: { app_guid: "my-app" } };

  it("binds with the handler's environment as credentials: 201, 200 again, 409 for another app", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    await broker.call("PUT", INSTANCE, provisionBody("shared"));
    const credentials = { REDIS_HOST: "127.0.0.1", REDIS_PORT: "6379", INSTANCE: "osb:5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60", APP: "my-app" };
    expect(await broker.call("PUT", BINDING, bindBody)).toEqual(expect.objectContaining({ status: 201, body: { credentials } }));
    expect(await broker.call("PUT", BINDING, bindBody)).toEqual(expect.objectContaining({ status: 200, body: { credentials } }));
    expectOsbError(await broker.call("PUT", BINDING, { ...bindBody, bind_resource: { app_guid: "other-app" } }), 409, "Conflict");
    expect(await broker.call("GET", BINDING)).toMatchObject({ status: 200, body: {} });
    expect(seen.find((call) => call.handler === "bindApp")?.context.osb).toMatchObject({
      bindingId: "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d",
      app: "my-app",
    });
  });

  it("takes the app from context when bind_resource has none", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    await broker.call("PUT", INSTANCE, provisionBody("shared"));
    const { body } = await broker.call("PUT", BINDING, { service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, context: { platform: "tsuru", app_name: "web" } });
    expect(body).toMatchObject({ credentials: { APP: "web" } });
  });

  it("unbinds: 200 {}, then 410 Gone; GET of the binding then 404", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    await broker.call("PUT", INSTANCE, provisionBody("shared"));
    await broker.call("PUT", BINDING, bindBody);
    expect(await broker.call("DELETE", `${BINDING}?${query("shared")}`)).toMatchObject({ status: 200, body: {} });
    expect(seen.find((call) => call.handler === "unbindApp")?.request).toMatchObject({ appName: "osb:9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d", appHost: "my-app" });
    expect(await broker.call("DELETE", `${BINDING}?${query("shared")}`)).toMatchObject({ status: 410, body: {} });
    expectOsbError(await broker.call("GET", BINDING), 404, "NotFound");
  });

  it("answers 422 ConcurrencyError when another call holds the instance's lock", async () => {
    const held = gate();
    const entered = gate();
    const { handlers } = fakeService({
      async update() {
        entered.open();
        await held.opened;
      },
    });
    const broker = await start(handlers, new MemoryStore(), { registry: { store: new MemoryStore(), lockTimeoutMs: 200 } });
    await broker.call("PUT", INSTANCE, provisionBody("shared"));
    const updating = broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, parameters: { size: 3 } });
    await entered.opened;
    expectOsbError(await broker.call("PUT", BINDING, bindBody), 422, "ConcurrencyError");
    held.open();
    expect((await updating).status).toBe(200);
  });
});

describe("originating identity", () => {
  it("reaches the handler's ctx: the user, the platform and its object, the instance's platform name", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    const value = Buffer.from(JSON.stringify({ user_id: "alice@example.com" })).toString("base64");
    const answer = await broker.call("PUT", INSTANCE, provisionBody("shared", { context: { platform: "tsuru", instance_name: "my-cache" } }), {
      "X-Broker-API-Originating-Identity": `tsuru ${value}`,
      "X-Broker-API-Request-Identity": "req-42",
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.get("X-Broker-API-Request-Identity")).toBe("req-42");
    expect(seen[0]?.context).toEqual({
      user: "alice@example.com",
      osb: {
        instanceId: "5f0c8a3e-8d1b-4c55-9a0e-1b2c3d4e5f60",
        instanceName: "my-cache",
        context: { platform: "tsuru", instance_name: "my-cache" },
        originatingIdentity: { platform: "tsuru", value: { user_id: "alice@example.com" } },
        acceptsIncomplete: false,
      },
    });
  });

  it("answers 400 for a header that is not `<platform> <base64 JSON object>`", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    const answer = await broker.call("PUT", INSTANCE, provisionBody("shared"), { "X-Broker-API-Originating-Identity": "tsuru not-json" });
    expectOsbError(answer, 400, "BadRequest");
  });
});

describe("native and OSB instances side by side", () => {
  it("never confuses a native instance with an OSB one of the same name", async () => {
    const { handlers, seen } = fakeService();
    const store = new MemoryStore();
    const broker = await start(handlers, store);
    const native = (method: string, path: string, body?: string) =>
      fetch(broker.url + path, {
        method,
        headers: { Authorization: AUTH_HEADER, "Content-Type": "application/x-www-form-urlencoded" },
        body,
      });
    const name = "cache1";
    expect((await native("POST", "/resources", `name=${name}&plan=shared&team=t`)).status).toBe(201);
    // The same name as an OSB instance id: a new instance, not a repeat of the native one.
    expect((await broker.call("PUT", `/v2/service_instances/${name}`, provisionBody("shared"))).status).toBe(201);
    expect(await store.getInstance(name)).toMatchObject({ name, team: "t" });
    expect(await store.getInstance(`osb:${name}`)).toMatchObject({ name: `osb:${name}`, team: "org-1" });
    // Each protocol reaches only its own: removing the OSB one leaves the native one running.
    expect((await broker.call("DELETE", `/v2/service_instances/${name}?${query("shared")}`)).status).toBe(200);
    expect((await native("GET", `/resources/${name}/status`)).status).toBe(204);
    expect((await native("DELETE", `/resources/${encodeURIComponent(`osb:${name}`)}`)).status).toBe(400);
    expect((await broker.call("GET", `/v2/service_instances/${name}`)).status).toBe(404);
    expect(seen.filter((call) => call.handler === "destroy").map((call) => call.request)).toEqual([{ instance: `osb:${name}` }]);
  });
});
