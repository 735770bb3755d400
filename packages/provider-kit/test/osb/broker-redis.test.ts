/**
 * The background path of OSB on a RedisStore on a real redis-server: a 202 provision polled to
 * `succeeded`, bound, unbound and deprovisioned, and its records apart from a native instance's.
 */
import { describe, expect, it } from "vitest";
import { eventually } from "../../../../test/support/eventually.js";
import { useStores } from "../lifecycle/helpers.js";
import { fakeService, PLAN_IDS, provisionBody, query, SERVICE_ID, useBrokers } from "./helpers.js";

const stores = useStores();
const start = useBrokers();
const ID = "0b6f7c2a-3e4d-4f5a-8b9c-0d1e2f3a4b5c";
const INSTANCE = `/v2/service_instances/${ID}`;
/** A GUID that is also a valid native instance name (it starts with a letter). */
const NATIVE_NAME = `a${ID.slice(1)}`;

describe("OSB on a RedisStore", () => {
  it("provisions in the background (202, in progress, succeeded), binds, unbinds and deprovisions", async () => {
    const { handlers, provisioned } = fakeService();
    const store = stores.fresh("redis");
    const broker = await start(handlers, store);
    expect(await broker.call("PUT", `${INSTANCE}?accepts_incomplete=true`, provisionBody("dedicated"))).toMatchObject({
      status: 202,
      body: { operation: "provision" },
    });
    const polled = `${INSTANCE}/last_operation?operation=provision&${query("dedicated")}`;
    expect((await broker.call("GET", polled)).body.state).toBe("in progress");
    // Bound while it provisions: the registry's lock and state say "not yet", as OSB's ConcurrencyError.
    const binding = `${INSTANCE}/service_bindings/b-1`;
    const bindBody = { service_id: SERVICE_ID, plan_id: PLAN_IDS.dedicated, bind_resource: { app_guid: "web" } };
    expect(await broker.call("PUT", binding, bindBody)).toMatchObject({ status: 422, body: { error: "ConcurrencyError" } });
    provisioned.open();
    await eventually(async () => (await broker.call("GET", polled)).body.state === "succeeded");
    expect(await broker.call("PUT", binding, bindBody)).toMatchObject({ status: 201, body: { credentials: { APP: "web" } } });
    expect(await store.getBinding(`osb:${ID}`, "app", "osb:b-1")).toMatchObject({ appName: "osb:b-1", appHost: "web" });
    expect((await broker.call("DELETE", `${binding}?${query("dedicated")}`)).status).toBe(200);
    expect((await broker.call("DELETE", `${INSTANCE}?accepts_incomplete=true&${query("dedicated")}`)).status).toBe(200);
    expect((await broker.call("GET", `${INSTANCE}/last_operation?operation=deprovision`)).status).toBe(410);
  });

  it("keeps an OSB instance apart from a native one of the same name", async () => {
    const { handlers } = fakeService();
    const store = stores.fresh("redis");
    const broker = await start(handlers, store, { auth: false });
    const created = await fetch(`${broker.url}/resources`, {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: `name=${NATIVE_NAME}&plan=shared`,
    });
    expect(created.status).toBe(201);
    const sameName = `/v2/service_instances/${NATIVE_NAME}`;
    expect((await broker.call("PUT", sameName, provisionBody("shared"))).status).toBe(201);
    expect((await broker.call("PUT", sameName, provisionBody("shared"))).status).toBe(200);
    expect(await store.getInstance(NATIVE_NAME)).not.toHaveProperty("team");
    expect(await store.getInstance(`osb:${NATIVE_NAME}`)).toMatchObject({ team: "org-1", plan: "shared" });
  });
});
