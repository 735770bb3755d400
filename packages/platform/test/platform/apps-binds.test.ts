/** Apps, their env and units, bind and unbind, run and the provider-call record, through HTTP. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest, STORES, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";

interface EnvVar {
  name: string;
  value: string;
  public: boolean;
}

describe.each(STORES)("apps and binds (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    provider = await startTestProvider();
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) })); // Variant A
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("creates, lists, shows and refuses apps by the platform's rules", async () => {
    const created = await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "node" } }));
    expect(created.json()).toMatchObject({ status: "success", repository_url: expect.any(String) });
    expect((await t.admin.post("/apps", { json: { name: "shop", platform: "node" } })).status).toBe(409);
    expect((await t.admin.post("/apps", { json: { name: "Shop!", platform: "node" } })).text).toMatch(/^Invalid app name/);
    expect((await t.admin.post("/apps", { json: { name: "a".repeat(64), platform: "node" } })).status).toBe(400);
    expect((await t.admin.post("/apps", { json: { name: "nop" } })).status).toBe(400);
    // Fields the platform's client sends beyond these are ignored, never an error.
    await t.admin.ok(t.admin.post("/apps", { json: { name: "extra", platform: "go", plan: "small", tag: ["a"], description: "x" } }));
    await t.admin.ok(t.admin.delete("/apps/extra"));
    expect((await t.admin.post("/apps", { json: { name: "nop", platform: "node", teamOwner: "no-team" } })).status).toBe(404);

    const shop = (await t.admin.get("/apps/shop")).json<{ Units: unknown[]; Pool: string; Teams: string[]; State: string }>();
    expect(shop).toMatchObject({ Name: "shop", Framework: "node", Teams: ["admin"], Pool: "local", State: "started" });
    expect(shop.Units).toEqual([{ Ip: expect.stringMatching(/^10\.10\.10\.\d+$/), Name: expect.stringMatching(/^shop-\d+$/), State: "started" }]);
    expect((await t.admin.get("/apps")).json()).toEqual([{ Ip: "shop.localhost", Name: "shop", Units: [{ Name: expect.any(String), State: "started" }] }]);
    expect((await t.admin.get("/apps/nope")).status).toBe(404);
    const outsider = await t.admin.user("gina@example.com");
    expect((await outsider.get("/apps/shop")).status).toBe(403);
    expect((await outsider.post("/apps", { json: { name: "ginas", platform: "go" } })).status).toBe(403);
    await t.admin.ok(t.admin.get("/apps/shop/restart"));
  });

  it("sets and unsets env vars, and refuses names the platform refuses", async () => {
    await t.admin.ok(t.admin.post("/apps/shop/env", { json: { envs: [{ name: "GREETING", value: "hello world" }] } }));
    await t.admin.ok(t.admin.post("/apps/shop/env", { json: { envs: [{ name: "API_KEY", value: "k-123" }], private: true } }));
    await t.admin.ok(t.admin.post("/apps/shop/env", { json: { envs: [{ name: "MODE", value: "test" }] } }));
    const env = (await t.admin.get("/apps/shop/env")).json<EnvVar[]>();
    expect(env).toEqual(
      expect.arrayContaining([
        { name: "GREETING", value: "hello world", public: true },
        { name: "API_KEY", value: "*** (private variable)", public: false },
        { name: "MODE", value: "test", public: true },
        { name: "TSURU_APPNAME", value: "shop", public: true },
      ]),
    );
    expect((await t.admin.post("/apps/shop/env", { json: { envs: [{ name: "TSURU_X", value: "1" }] } })).status).toBe(400);
    expect((await t.admin.post("/apps/shop/env", { json: { envs: [{ name: "1BAD", value: "1" }] } })).status).toBe(400);
    expect((await t.admin.post("/apps/shop/env", { json: { envs: "nope" } })).status).toBe(400);
    await t.admin.ok(t.admin.delete("/apps/shop/env?env=MODE"));
    await t.admin.ok(t.admin.delete("/apps/shop/env", { json: { names: ["GREETING"] } }));
    const names = (await t.admin.get("/apps/shop/env")).json<EnvVar[]>().map((variable) => variable.name);
    expect(names).not.toContain("MODE");
    expect(names).not.toContain("GREETING");
  });

  it("binds in the platform's order (bind-app, then one bind per unit) and gives the app the variables", async () => {
    await t.admin.ok(t.admin.put("/apps/shop/units", { text: "1" }));
    provider.received.length = 0;
    const bound = await t.admin.ok(t.admin.put("/services/instances/kv1/shop"));
    // The names only, as the platform shows them: the values are the app's private variables.
    const hidden = "*** (private variable)";
    expect(bound.json()).toEqual({ REDIS_HOST: hidden, REDIS_PORT: hidden, REDIS_TLS: hidden, REDIS_PASSWORD: hidden });
    expect(bound.text).not.toContain("bind-secret-value");
    expect((await t.admin.ok(t.admin.get("/apps/shop/env/REDIS_PASSWORD"))).json()).toEqual({ name: "REDIS_PASSWORD", value: "bind-secret-value", public: false });
    expect(provider.handlers()).toEqual(["bindApp", "bindUnit", "bindUnit"]);
    const units = (await t.admin.get("/apps/shop")).json<{ Units: Array<{ Ip: string }> }>().Units.map((unit) => unit.Ip);
    expect(provider.received.slice(1).map((call) => (call.request as { unitHost: string }).unitHost)).toEqual(units);
    expect(provider.received[0]!.request).toMatchObject({ appName: "shop", appHost: "shop.localhost" });
    expect(provider.received[0]!.context.user).toBe("admin@example.com");

    // bindAppDBAction's ErrAppAlreadyBound: 500.
    expect((await t.admin.put("/services/instances/kv1/shop")).status).toBe(500);
    expect((await t.admin.put("/services/instances/nope/shop")).status).toBe(404);
    expect((await t.admin.put("/services/instances/kv1/nope")).status).toBe(404);
    const outsider = await t.admin.login("gina@example.com", "user-password");
    expect((await outsider.put("/services/instances/kv1/shop")).status).toBe(403);

    const env = (await t.admin.get("/apps/shop/env")).json<EnvVar[]>();
    expect(env).toContainEqual({ name: "REDIS_PASSWORD", value: "*** (private variable)", public: false });
    expect(env.map((variable) => variable.name)).toContain("TSURU_SERVICES");
    expect((await t.admin.get("/services/instances?app=shop")).json()).toEqual([{ service: "kv", instances: ["kv1"] }]);
    expect((await t.admin.get("/services/instances/kv1")).json()).toMatchObject({ apps: ["shop"] });
  });

  it("runs a command with exactly the app's environment, once or on every unit", async () => {
    const script = 'echo "$TSURU_APPNAME $REDIS_HOST $API_KEY"; echo "$TSURU_SERVICES"';
    const once = await t.admin.ok(t.admin.post("/apps/shop/run?once=true", { text: script }));
    const [first, services] = once.text.trim().split("\n");
    expect(first).toBe("shop 10.0.0.1 k-123");
    expect(JSON.parse(services!)).toEqual({
      kv: [{ instance_name: "kv1", envs: { REDIS_HOST: "10.0.0.1", REDIS_PORT: "6379", REDIS_TLS: "true", REDIS_PASSWORD: "bind-secret-value" } }],
    });
    const everyUnit = await t.admin.ok(t.admin.post("/apps/shop/run", { text: "echo $TSURU_UNIT" }));
    expect(everyUnit.text.trim().split("\n")).toHaveLength(2);
    const failing = await t.admin.post("/apps/shop/run?once=true", { text: "echo before; exit 3" });
    expect([failing.status, failing.text]).toEqual([400, "before\nThe command exited with code 3."]);
    // `once` as Go's ParseBool: 1 is true, anything but its true forms false.
    expect((await t.admin.post("/apps/shop/run?once=1", { text: "echo $TSURU_UNIT" })).text.trim().split("\n")).toHaveLength(1);
    expect((await t.admin.post("/apps/shop/run?once=maybe", { text: "echo $TSURU_UNIT" })).text.trim().split("\n")).toHaveLength(2);
    expect((await t.admin.post("/apps/shop/run", { text: "" })).status).toBe(400);
    const log = (await t.admin.get("/apps/shop/log?lines=50&source=app-run")).json<Array<{ Message: string }>>();
    expect(log.map((entry) => entry.Message)).toContain("before");
    expect((await t.admin.get("/apps/shop/log")).status).toBe(400);
  });

  it("tells each bound Variant A provider about units added and removed", async () => {
    provider.received.length = 0;
    await t.admin.ok(t.admin.put("/apps/shop/units", { text: "2" }));
    expect(provider.handlers()).toEqual(["bindUnit", "bindUnit"]);
    await t.admin.ok(t.admin.delete("/apps/shop/units", { text: "3" }));
    expect(provider.handlers()).toEqual(["bindUnit", "bindUnit", "unbindUnit", "unbindUnit", "unbindUnit"]);
    expect((await t.admin.get("/apps/shop")).json<{ Units: unknown[] }>().Units).toHaveLength(1);
    expect((await t.admin.delete("/apps/shop/units", { text: "5" })).status).toBe(400);
    expect((await t.admin.put("/apps/shop/units", { text: "many" })).status).toBe(400);
    expect((await t.admin.put("/apps/shop/units", { text: "1000" })).status).toBe(400);
  });

  it("records every provider call with credentials and bind values masked, and a curl line", async () => {
    const calls = (await t.admin.get("/provider-calls?app=shop")).json<ProviderCall[]>();
    const bindApp = calls.find((call) => call.path === "/resources/kv1/bind-app")!;
    expect(bindApp).toMatchObject({ service: "kv", instance: "kv1", app: "shop", method: "POST", status: 201 });
    expect(bindApp.requestHeaders.Authorization).toBe("Basic <redacted>");
    expect(bindApp.answer).toBe('{"REDIS_HOST":<string>,"REDIS_PORT":<string>,"REDIS_TLS":<string>,"REDIS_PASSWORD":<string>}');
    expect(bindApp.curl).toContain(`'${provider.running.url}/resources/kv1/bind-app'`);
    expect(bindApp.curl).toContain('"$PROVIDER_PASSWORD"');
    const everything = JSON.stringify(await t.admin.get("/provider-calls"));
    expect(everything).not.toContain("bind-secret-value");
    expect(everything).not.toContain("s3cret");
    expect((await t.admin.get("/provider-calls?instance=nope")).json()).toEqual([]);
    expect((await t.admin.get("/provider-calls?app=Bad!")).status).toBe(400);
    // A user whose teams may not use the service sees none of its calls.
    const outsider = await t.admin.login("gina@example.com", "user-password");
    expect((await outsider.get("/provider-calls")).json()).toEqual([]);
  });

  it("unbinds in reverse (units, then bind-app), refuses removal while bound, and removes the app with its binds", async () => {
    const refused = await t.admin.delete("/services/instances/kv1");
    expect([refused.status, refused.text]).toEqual([400, "This service instance is bound to at least one app. Unbind them before removing it, or remove it with ?unbindall=true (bound: shop)."]);
    provider.received.length = 0;
    await t.admin.ok(t.admin.delete("/services/instances/kv1/shop"));
    expect(provider.handlers()).toEqual(["unbindUnit", "unbindApp"]);
    const notBound = await t.admin.delete("/services/instances/kv1/shop");
    expect([notBound.status, notBound.text]).toEqual([412, "This app is not bound to this service instance."]);
    const names = (await t.admin.get("/apps/shop/env")).json<EnvVar[]>().map((variable) => variable.name);
    expect(names).not.toContain("REDIS_HOST");

    await t.admin.ok(t.admin.put("/services/instances/kv1/shop"));
    provider.received.length = 0;
    await t.admin.ok(t.admin.delete("/apps/shop"));
    expect(provider.handlers()).toEqual(["unbindUnit", "unbindApp"]);
    expect((await t.admin.get("/services/instances/kv1")).json()).toMatchObject({ apps: [] });
    expect((await t.admin.get("/apps/shop")).status).toBe(404);
  });
});
