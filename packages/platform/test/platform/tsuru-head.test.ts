/**
 * The routes today's client calls, answered as today's platform (tsuru HEAD) answers them: the
 * calls a service registered through them receives, and the statuses of the streamed routes and
 * of creation. Each case names the platform's function it follows.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError } from "provider-kit";
import { manifest, readStream, startTestPlatform, startTestProvider, tsuru, type TestPlatform, type TestProvider } from "./helpers.js";
import { PASSWORD, USER } from "../../../../test/support/fake-provider.js";

describe("today's platform behind today's client's routes", () => {
  let t: TestPlatform;
  let provider: TestProvider;
  let destroyFailure: ProviderError | undefined;
  const client = (method: string, path: string, form?: Record<string, string | string[]>) => tsuru(t.url, t.admin.token, method, path, form);
  /** The client's service-create form, as it sends a manifest's fields: no variant. */
  const serviceForm = (id: string, extra: Record<string, string> = {}) => ({ id, password: PASSWORD, username: USER, team: "admin", endpoint: provider.running.url, ...extra });

  beforeAll(async () => {
    t = await startTestPlatform("memory");
    provider = await startTestProvider({
      destroy: () => {
        if (destroyFailure) throw destroyFailure;
      },
    });
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "go" } }));
    // Two units: the one an app starts with and one more.
    await t.admin.ok(t.admin.put("/apps/web/units", { text: "1" }));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  /** The provider's handlers a bind of a fresh instance of `service` to the app reaches. */
  async function bindHandlers(service: string, instance: string): Promise<string[]> {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: instance, service_name: service } }), 201);
    const before = provider.handlers().length;
    readStream(await client("PUT", `/1.13/services/${service}/instances/${instance}/apps/web`, { noRestart: "false" }));
    return provider.handlers().slice(before);
  }

  it("calls a service registered by POST /1.0/services with no variant as today's platform does: no unit binds", async () => {
    expect((await client("POST", "/1.0/services", serviceForm("today"))).status).toBe(201);
    expect((await t.admin.get("/services/today/provider")).json()).toMatchObject({ variant: "current" });
    expect(await bindHandlers("today", "now1")).toEqual(["bindApp"]);
    // The spec's raw YAML route keeps the spec's Variant A: a bind per unit.
    await t.admin.ok(t.admin.post("/services", { text: manifest("unitera", provider.running.url) }));
    expect(await bindHandlers("unitera", "then1")).toEqual(["bindApp", "bindUnit", "bindUnit"]);
    // Either route takes the variant asked for.
    expect((await client("POST", "/1.0/services", serviceForm("asked", { variant: "A" }))).status).toBe(201);
    expect(await bindHandlers("asked", "asked1")).toEqual(["bindApp", "bindUnit", "bindUnit"]);
    const wrong = await client("POST", "/1.0/services", serviceForm("wrong", { variant: "Z" }));
    expect([wrong.status, wrong.text.trim()]).toEqual([400, 'Invalid variant "Z": use A, B or current.']);
  });

  it("answers 201 to creating a user, a team and an app on the client's routes (createUser, createTeam, createApp), 200 on the spec's", async () => {
    expect((await client("POST", "/1.0/users", { email: "ana@example.com", password: "user-password" })).status).toBe(201);
    expect((await client("POST", "/1.0/teams", { name: "shop" })).status).toBe(201);
    expect((await client("POST", "/1.0/apps", { name: "api", platform: "go", teamOwner: "admin" })).status).toBe(201);
    expect((await t.admin.post("/users", { json: { email: "bo@example.com", password: "user-password" } })).status).toBe(200);
    expect((await t.admin.post("/teams", { json: { name: "ops" } })).status).toBe(200);
  });

  it("serves the 1.0 bind and unbind paths (bindServiceInstance, unbindServiceInstance), versioned and plain", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "old1", service_name: "today" } }), 201);
    for (const prefix of ["/1.0", ""]) {
      const bound = readStream(await client("PUT", `${prefix}/services/today/instances/old1/web`, { noRestart: "false" }));
      expect(bound.error).toBeUndefined();
      expect(bound.messages).toContain("REDIS_HOST\n");
      const unbound = readStream(await client("DELETE", `${prefix}/services/today/instances/old1/web?noRestart=false`));
      expect(unbound.messages.at(-1)).toBe('\nInstance "old1" is not bound to the app "web" anymore.\n');
    }
  });

  it("answers a failure before the stream's first message with its HTTP status (errorHandlingMiddleware)", async () => {
    const path = "/1.13/services/today/instances/now1/apps/web";
    // bindAppDBAction's ErrAppAlreadyBound and UnbindApp's ErrAppNotBound are plain errors: 500.
    const again = await client("PUT", path, { noRestart: "false" });
    expect([again.status, again.text.trim()]).toEqual([500, 'app is already bound to this service instance ("now1" is up)']);
    // removeServiceInstance: DeleteInstance's ErrServiceInstanceBound, a 400.
    const bound = await client("DELETE", "/1.0/services/today/instances/now1");
    expect(bound.status).toBe(400);
    expect(bound.text).toMatch(/^This service instance is bound to at least one app/);
    readStream(await client("DELETE", `${path}?noRestart=false`));
    const notBound = await client("DELETE", `${path}?noRestart=false`);
    expect([notBound.status, notBound.text.trim()]).toEqual([500, "app is not bound to this service instance"]);
    // The spec's route keeps the old platform's 412.
    expect((await t.admin.delete("/services/instances/now1/web")).status).toBe(412);
  });

  it("answers a failed destroy with 500, offering ?ignoreerrors=true only when the provider may no longer have the instance", async () => {
    destroyFailure = new ProviderError("the cluster is read-only today", 500);
    const refused = await client("DELETE", "/1.0/services/today/instances/now1");
    expect([refused.status, refused.text.trim()]).toEqual([500, "Failed to destroy the instance now1: invalid response: the cluster is read-only today (code: 500)"]);
    destroyFailure = new ProviderError("no such instance", 404);
    const gone = await client("DELETE", "/1.0/services/today/instances/now1");
    expect([gone.status, gone.text.trim()]).toEqual([500, "instance does not exist in the service API (if the provider no longer has it, remove it with ?ignoreerrors=true)"]);
    const forced = readStream(await client("DELETE", "/1.0/services/today/instances/now1?ignoreerrors=true"));
    expect(forced.messages.at(-1)).toBe("service instance successfully removed\n");
    destroyFailure = undefined;
  });

  it("streams what removal with ?unbindall=true said before a later failure, the failure as the stream's Error", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "late1", service_name: "today" } }), 201);
    readStream(await client("PUT", "/1.13/services/today/instances/late1/apps/web", { noRestart: "false" }));
    destroyFailure = new ProviderError("the cluster is read-only today", 500);
    const removal = readStream(await client("DELETE", "/1.0/services/today/instances/late1?unbindall=true"));
    expect(removal.messages[0]).toBe('Unbind app "web" ...\n');
    expect(removal.error).toBe("Failed to destroy the instance late1: invalid response: the cluster is read-only today (code: 500)");
    destroyFailure = undefined;
  });
});
