/**
 * What OSB 2.17 decides and the suite the OSB project ships does not check: each call's required
 * fields, conflicts on one binding id, overlapping calls on one instance (on both stores), polls
 * of an instance that never existed or was removed, and OSB's error body for every answer under
 * `/v2`, whoever raised it. Real HTTP on loopback.
 */
import { describe, expect, it } from "vitest";
import { MemoryStore, type Store } from "../../src/index.js";
import { eventually } from "../../../../test/support/eventually.js";
import { gate } from "../../../../test/support/gate.js";
import { STORE_KINDS, useStores } from "../lifecycle/helpers.js";
import { AUTH_HEADER, fakeService, OSB, PLAN_IDS, provisionBody, query, SERVICE_ID, useBrokers, type Broker } from "./helpers.js";

const stores = useStores();
const start = useBrokers();
const ID = "3c4d5e6f-7a8b-4c9d-8e0f-1a2b3c4d5e6f";
const INSTANCE = `/v2/service_instances/${ID}`;
const BINDING = `${INSTANCE}/service_bindings/b-1`;

type Answer = Awaited<ReturnType<Broker["call"]>>;

/** OSB's error body (OSB 2.17 "Service Broker Errors"): JSON, a non-empty description, an optional code. */
function expectOsbError(answer: Answer, status: number, mentioning?: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
  expect(Object.keys(answer.body).sort()).toEqual(expect.arrayContaining(["description"]));
  expect(answer.body.description).toEqual(expect.any(String));
  expect(answer.body.description).not.toBe("");
  if (mentioning !== undefined) expect(answer.body.description).toContain(mentioning);
}

const without = (body: Record<string, unknown>, field: string) => Object.fromEntries(Object.entries(body).filter(([name]) => name !== field));

/** The store, with a callback each time a call asks for an instance lock: the point where a call's reads made before the lock are done. */
function watchingLocks(store: Store, onLock: () => void): Store {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (property === "withLock") return (...args: Parameters<Store["withLock"]>) => (onLock(), target.withLock(...args));
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Resolves once `count` more calls asked for the instance lock. */
function lockAsks(count: number) {
  let asked = 0;
  const reached = gate();
  return {
    onLock: () => {
      asked += 1;
      if (asked === count) reached.open();
    },
    reached: reached.opened,
    /** Counting starts now: the setup's own calls do not count. */
    reset: () => (asked = 0),
  };
}

describe("parameters nested deeper than a native call's may be", () => {
  it("are refused with 400 saying how deep they may go, in an object or inside a list, and reach no handler", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    let deep: unknown = "leaf";
    for (let level = 0; level < 5_000; level += 1) deep = { a: deep };
    for (const parameters of [deep, { list: [deep] }]) {
      expectOsbError(await broker.call("PUT", INSTANCE, { ...provisionBody("shared"), parameters }), 400, "nested at most 32 levels deep");
    }
    expect(seen).toEqual([]);
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared", { parameters: { a: { b: { c: "1" } } } }))).status).toBe(201);
  });
});

describe("required fields (OSB 2.17: 400 for missing mandatory data, naming the field)", () => {
  it("refuses a provision without service_id, plan_id, organization_guid or space_guid, or with one empty", async () => {
    const { handlers, seen } = fakeService();
    const broker = await start(handlers, new MemoryStore());
    for (const field of ["service_id", "plan_id", "organization_guid", "space_guid"]) {
      expectOsbError(await broker.call("PUT", INSTANCE, without(provisionBody("shared"), field)), 400, field);
      expectOsbError(await broker.call("PUT", INSTANCE, { ...provisionBody("shared"), [field]: "" }), 400, field);
    }
    expect(seen).toEqual([]);
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
  });

  it("refuses an update without service_id, a bind without service_id or plan_id", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expectOsbError(await broker.call("PATCH", INSTANCE, { plan_id: PLAN_IDS.dedicated }), 400, "service_id");
    const bindBody = { service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, bind_resource: { app_guid: "web" } };
    for (const field of ["service_id", "plan_id"]) expectOsbError(await broker.call("PUT", BINDING, without(bindBody, field)), 400, field);
  });

  it("refuses an unbind or deprovision without service_id or plan_id in the query, or with one empty", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    for (const path of [BINDING, INSTANCE]) {
      expectOsbError(await broker.call("DELETE", `${path}?plan_id=${PLAN_IDS.shared}`), 400, "service_id");
      expectOsbError(await broker.call("DELETE", `${path}?service_id=${SERVICE_ID}`), 400, "plan_id");
      expectOsbError(await broker.call("DELETE", `${path}?service_id=&plan_id=${PLAN_IDS.shared}`), 400, "service_id");
    }
  });

  it("accepts a poll without service_id, plan_id or operation, refuses one that sends them empty", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expect((await broker.call("GET", `${INSTANCE}/last_operation`)).status).toBe(200);
    for (const field of ["service_id", "plan_id", "operation"]) {
      expectOsbError(await broker.call("GET", `${INSTANCE}/last_operation?${field}=`), 400, field);
    }
  });
});

describe("binding ids reused", () => {
  const bindBody = (extra: Record<string, unknown> = {}) => ({
    service_id: SERVICE_ID,
    plan_id: PLAN_IDS.shared,
    bind_resource: { app_guid: "web" },
    parameters: { role: "reader" },
    ...extra,
  });

  it("answers 200 for the identical bind, 409 for another app, plan or parameters (OSB 2.17 Binding, 409)", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore());
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expect((await broker.call("PUT", BINDING, bindBody())).status).toBe(201);
    expect(await broker.call("PUT", BINDING, bindBody())).toMatchObject({ status: 200, body: { credentials: { APP: "web" } } });
    expectOsbError(await broker.call("PUT", BINDING, bindBody({ bind_resource: { app_guid: "worker" } })), 409);
    expectOsbError(await broker.call("PUT", BINDING, bindBody({ plan_id: PLAN_IDS.dedicated })), 409);
    expectOsbError(await broker.call("PUT", BINDING, bindBody({ parameters: { role: "writer" } })), 409);
    expect((await broker.call("PUT", BINDING, bindBody())).status).toBe(200);
  });
});

describe("refusals in the order the platform needs them", () => {
  it("answers 409 to a different provision of an existing id even on a plan that must be polled, 422 AsyncRequired only to a new one", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore(), { osb: { ...OSB, asyncPlans: ["dedicated"] } });
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expectOsbError(await broker.call("PUT", INSTANCE, provisionBody("dedicated")), 409);
    expectOsbError(await broker.call("PUT", `${INSTANCE}-2`, provisionBody("dedicated")), 422, "accepts_incomplete");
  });

  it("without an update handler, answers 200 to an update that changes nothing and 422 to one that changes the plan or parameters", async () => {
    const { update: _update, ...handlers } = fakeService().handlers;
    const broker = await start(handlers, new MemoryStore());
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared", { parameters: { maxmemory: "64mb" } }))).status).toBe(201);
    expect((await broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID })).status).toBe(200);
    expect((await broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, parameters: { maxmemory: "64mb" } })).status).toBe(200);
    expectOsbError(await broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, plan_id: PLAN_IDS.dedicated }), 422);
    expectOsbError(await broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, parameters: { maxmemory: "128mb" } }), 422);
  });
});

describe.each(STORE_KINDS)("overlapping calls on one instance, on the %s store", (kind) => {
  it("never answers 201 to two concurrent binds of one id for two apps; the registry holds the one answered 201", async () => {
    const asks = lockAsks(2);
    const firstBind = gate();
    let binds = 0;
    const { handlers } = fakeService({
      async bindApp(request) {
        binds += 1;
        // The first bind holds the lock until the second has asked for it (its own reads done).
        if (binds === 1) await firstBind.opened;
        return { APP: request.appHost ?? "" };
      },
    });
    const store = stores.fresh(kind);
    const broker = await start(handlers, watchingLocks(store, asks.onLock));
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    asks.reset();
    void asks.reached.then(() => firstBind.open());
    const body = (app: string) => ({ service_id: SERVICE_ID, plan_id: PLAN_IDS.shared, bind_resource: { app_guid: app } });
    const answers = await Promise.all([broker.call("PUT", BINDING, body("web")), broker.call("PUT", BINDING, body("worker"))]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
    const created = answers.find((answer) => answer.status === 201)!;
    const app = (created.body.credentials as Record<string, string>).APP;
    expect(await store.getBinding(`osb:${ID}`, "app", "osb:b-1")).toMatchObject({ appHost: app });
  });

  it("keeps both changes of two overlapping updates (plan, then parameters) or refuses one; never loses one answered 200", async () => {
    const asks = lockAsks(2);
    const firstUpdate = gate();
    let updates = 0;
    const { handlers } = fakeService({
      async update() {
        updates += 1;
        if (updates === 1) await firstUpdate.opened;
      },
    });
    const store = stores.fresh(kind);
    const broker = await start(handlers, watchingLocks(store, asks.onLock));
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared", { parameters: { maxmemory: "64mb" } }))).status).toBe(201);
    asks.reset();
    void asks.reached.then(() => firstUpdate.open());
    const [planChange, parametersChange] = await Promise.all([
      broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, plan_id: PLAN_IDS.dedicated }),
      broker.call("PATCH", INSTANCE, { service_id: SERVICE_ID, parameters: { maxmemory: "128mb" } }),
    ]);
    const record = await store.getInstance(`osb:${ID}`);
    if (planChange.status === 200) expect(record?.plan).toBe("dedicated");
    if (parametersChange.status === 200) expect(record?.parameters).toEqual({ maxmemory: "128mb" });
    expect([planChange.status, parametersChange.status]).toContain(200);
  });

  it("polls: 404 for an instance that never existed, 410 once its removal ended, sync or in the background", async () => {
    const { handlers } = fakeService({ destroy: (request) => (request.instance.endsWith("-bg") ? { pending: true } : undefined), deprovision: async () => {} });
    const broker = await start(handlers, stores.fresh(kind));
    expectOsbError(await broker.call("GET", `${INSTANCE}/last_operation`), 404);
    expectOsbError(await broker.call("GET", `${INSTANCE}/last_operation?operation=deprovision&${query("shared")}`), 404);
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expect((await broker.call("DELETE", `${INSTANCE}?${query("shared")}`)).status).toBe(200);
    expect((await broker.call("GET", `${INSTANCE}/last_operation`)).status).toBe(410);
    // Provisioned again: the instance is back, the removal forgotten.
    expect((await broker.call("PUT", INSTANCE, provisionBody("shared"))).status).toBe(201);
    expect((await broker.call("GET", `${INSTANCE}/last_operation`)).status).toBe(200);

    const background = `${INSTANCE}-bg`;
    expect((await broker.call("PUT", background, provisionBody("shared"))).status).toBe(201);
    expect(await broker.call("DELETE", `${background}?accepts_incomplete=true&${query("shared")}`)).toMatchObject({ status: 202, body: { operation: "deprovision" } });
    await eventually(async () => (await broker.call("GET", `${background}/last_operation?operation=deprovision`)).status === 410);
  });
});

describe("errors under /v2 are OSB's JSON, whoever raised them", () => {
  const raw = (broker: Broker, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) =>
    fetch(broker.url + path, { ...init, headers: { Authorization: AUTH_HEADER, "X-Broker-API-Version": "2.17", ...init.headers } });
  const asAnswer = async (res: Response): Promise<Answer> => {
    const text = await res.text();
    const json = res.headers.get("content-type")?.startsWith("application/json") === true;
    return { status: res.status, body: json ? (JSON.parse(text) as Record<string, unknown>) : { text }, headers: res.headers };
  };

  it("answers auth (401), body (400, 413, 415), path (400) and route (404) errors with OSB's body", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore(), { bodyLimitBytes: 1024 });
    const unauthenticated = await broker.call("GET", "/v2/catalog", undefined, { Authorization: undefined });
    expectOsbError(unauthenticated, 401);
    expect(unauthenticated.headers.get("www-authenticate")).toMatch(/^Basic/);
    expectOsbError(await broker.call("GET", "/v2/catalog", undefined, { Authorization: `Basic ${Buffer.from("broker:wrong").toString("base64")}` }), 401);
    const json = { "Content-Type": "application/json" };
    expectOsbError(await asAnswer(await raw(broker, INSTANCE, { method: "PUT", headers: json, body: "{not json" })), 400);
    expectOsbError(await asAnswer(await raw(broker, INSTANCE, { method: "PUT", headers: json, body: JSON.stringify({ pad: "x".repeat(2048) }) })), 413);
    expectOsbError(await asAnswer(await raw(broker, INSTANCE, { method: "PUT", headers: { "Content-Type": "text/plain" }, body: "hello" })), 415);
    expectOsbError(await broker.call("GET", "/v2/service_instances/%ZZ"), 400);
    expectOsbError(await broker.call("GET", "/v2/nothing-here"), 404, "/v2/nothing-here");
    expectOsbError(await broker.call("POST", "/v2/catalog"), 404);
    expectOsbError(await asAnswer(await raw(broker, "/v2/catalog", { method: "OPTIONS" })), 404);
    // An unknown route is behind auth too.
    expectOsbError(await broker.call("GET", "/v2/nothing-here", undefined, { Authorization: undefined }), 401);
  });

  it("leaves the native routes' plain-text errors as they were", async () => {
    const broker = await start(fakeService().handlers, new MemoryStore(), { bodyLimitBytes: 1024 });
    const form = { "Content-Type": "application/x-www-form-urlencoded" };
    const expectText = async (res: Response, status: number) => {
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("text/plain; charset=utf-8");
      expect(await res.text()).not.toBe("");
    };
    await expectText(await fetch(`${broker.url}/resources`, { method: "POST", headers: form, body: "name=a" }), 401);
    await expectText(await raw(broker, "/resources", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{not json" }), 400);
    await expectText(await raw(broker, "/resources", { method: "POST", headers: form, body: `name=${"x".repeat(2048)}` }), 413);
    await expectText(await raw(broker, "/resources", { method: "POST", headers: { "Content-Type": "text/plain" }, body: "hello" }), 415);
    await expectText(await raw(broker, "/resources/%ZZ"), 400);
    await expectText(await raw(broker, "/nothing-here"), 404);
    await expectText(await raw(broker, "/v2x/catalog"), 404);
  });
});
