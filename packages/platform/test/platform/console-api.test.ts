/**
 * What the console needs from the platform, through HTTP: its files at / and /console/, and the
 * API additions it reads (paged provider calls grouped by operation with undo calls marked, a
 * private variable revealed, the provider's variant, an instance's plan and owner).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError } from "provider-kit";
import { INSTANCE_NAME_PATTERN } from "provider-kit/contract";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { PASSWORD } from "../../../../test/support/fake-provider.js";
import { manifest, STORES, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";

describe.each(STORES)("the console's API (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  let failing: TestProvider;
  let unitBinds = 0;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    provider = await startTestProvider();
    // Its second unit bind fails: the platform undoes the first one and the bind-app.
    failing = await startTestProvider({
      bindUnit: async () => {
        if (++unitBinds % 2 === 0) throw new ProviderError("unit bind refused", 500);
        return undefined;
      },
    });
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    await t.admin.ok(t.admin.post("/services", { text: manifest("flaky", failing.running.url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv", plan: "small" } }), 201);
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "flaky1", service_name: "flaky" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "node" } }));
    await t.admin.ok(t.admin.put("/apps/shop/units", { text: "1" }));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
    await failing.stop();
  });

  it("serves the page and its files without a login, with a policy that runs only its own script", async () => {
    const page = await t.anonymous.get("/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
    expect(page.text).toContain('<script type="module" src="/console/console.js"></script>');
    expect(page.text).toContain("<noscript>");
    const script = await t.anonymous.get("/console/console.js");
    expect([script.status, script.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect(script.text).toContain('api("POST", `/users/${encodeURIComponent(email)}/tokens`');
    // The modules it imports.
    for (const module of ["dom.js", "actions.js", "calls.js", "rules.js"]) {
      const served = await t.anonymous.get(`/console/${module}`);
      expect([served.status, served.headers.get("content-type"), served.headers.get("content-security-policy")]).toEqual([200, "text/javascript; charset=utf-8", expect.stringMatching(/script-src 'self';/)]);
    }
    expect((await t.anonymous.get("/console/console.css")).headers.get("content-type")).toBe("text/css; charset=utf-8");
    const missing = await t.anonymous.get("/console/..%2Fassets.ts");
    expect([missing.status, missing.text]).toEqual([404, 'The console has no file "../assets.ts".']);
    // The data stays behind the login.
    expect((await t.anonymous.get("/services")).status).toBe(401);
  });

  it("shows an instance's plan and owner team", async () => {
    expect((await t.admin.get("/services/instances/kv1")).json()).toEqual({ name: "kv1", servicename: "kv", teams: ["admin"], apps: [], planname: "small", teamowner: "admin", info: { Plan: "small" } });
  });

  it("GET /services/<s>/provider: the variant and endpoint, never the credentials; whether multi-cluster and whether the caller owns it", async () => {
    const answer = await t.admin.ok(t.admin.get("/services/kv/provider"));
    expect(answer.json()).toEqual({ service: "kv", endpoint: provider.running.url, variant: "A", encoding: "form", teams: ["admin"], multiCluster: false, owner: true });
    expect(answer.text).not.toContain(PASSWORD);
    expect((await t.admin.get("/services/nope/provider")).status).toBe(404);
    const outsider = await t.admin.user("olga@example.com");
    expect((await outsider.get("/services/kv/provider")).status).toBe(403);
    // A user of the service who owns it not: the console asks it no action grants (which would answer 403).
    await outsider.ok(outsider.post("/teams", { json: { name: `users-${kind}` } }));
    await t.admin.ok(t.admin.put(`/services/kv/users-${kind}`));
    expect((await outsider.ok(outsider.get("/services/kv/provider"))).json()).toMatchObject({ owner: false, multiCluster: false });
    await t.admin.ok(t.admin.delete(`/services/kv/users-${kind}`));
  });

  it("serves the platform's instance name rule as a module, for the console's forms to check before sending", async () => {
    const rules = await t.anonymous.get("/console/rules.js");
    expect([rules.status, rules.headers.get("content-type")]).toEqual([200, "text/javascript; charset=utf-8"]);
    expect(rules.text).toContain(`export const INSTANCE_NAME = new RegExp(${JSON.stringify(INSTANCE_NAME_PATTERN.source)}, "");`);
  });

  it("GET /apps/<a>/env/<name>: a private value, to the app's users only", async () => {
    await t.admin.ok(t.admin.put("/services/instances/kv1/shop"));
    await t.admin.ok(t.admin.post("/apps/shop/env", { json: { envs: [{ name: "API_KEY", value: "k-123" }], private: true } }));
    expect((await t.admin.get("/apps/shop/env")).text).not.toContain("k-123");
    expect((await t.admin.ok(t.admin.get("/apps/shop/env/API_KEY"))).json()).toEqual({ name: "API_KEY", value: "k-123", public: false });
    const services = (await t.admin.ok(t.admin.get("/apps/shop/env/TSURU_SERVICES"))).json<{ value: string }>();
    expect(Object.keys(JSON.parse(services.value) as object)).toEqual(["kv"]);
    const missing = await t.admin.get("/apps/shop/env/NOPE");
    expect([missing.status, missing.text]).toEqual([404, 'The app "shop" has no environment variable "NOPE".']);
    const outsider = await t.admin.user("olga@example.com");
    expect((await outsider.get("/apps/shop/env/API_KEY")).status).toBe(403);
    expect((await t.anonymous.get("/apps/shop/env/API_KEY")).status).toBe(401);
  });

  it("groups a request's provider calls under it and marks the calls that undo a failed bind", async () => {
    const answer = await t.admin.put("/services/instances/flaky1/shop");
    expect(answer.status).toBe(500);
    const calls = (await t.admin.get("/provider-calls?instance=flaky1")).json<ProviderCall[]>();
    const bind = calls.filter((call) => call.operation?.label === "PUT /services/instances/flaky1/shop");
    expect(bind.map((call) => `${call.undo ? "undo " : ""}${call.method} ${call.path} ${call.status}`)).toEqual([
      "POST /resources/flaky1/bind-app 201",
      "POST /resources/flaky1/bind 201",
      "POST /resources/flaky1/bind 500",
      "undo DELETE /resources/flaky1/bind 200",
      "undo DELETE /resources/flaky1/bind-app 200",
      "GET /resources/flaky1/status 204",
    ]);
    expect(new Set(bind.map((call) => call.operation!.id)).size).toBe(1);
    const create = calls.find((call) => call.method === "POST" && call.path === "/resources")!;
    expect(create.operation!.label).toBe("POST /services/instances");
    expect(create.operation!.id).not.toBe(bind[0]!.operation!.id);
  });

  it("pages through the calls: the newest `limit` below `before`, with the total in X-Total-Count", async () => {
    const all = (await t.admin.get("/provider-calls")).json<ProviderCall[]>();
    expect(all.length).toBeGreaterThan(4);
    const ids = all.map((call) => call.id);
    const newest = await t.admin.ok(t.admin.get("/provider-calls?limit=3"));
    expect(newest.headers.get("x-total-count")).toBe(String(all.length));
    expect(newest.json<ProviderCall[]>().map((call) => call.id)).toEqual(ids.slice(-3));
    const older = (await t.admin.get(`/provider-calls?limit=3&before=${ids.at(-3)}`)).json<ProviderCall[]>();
    expect(older.map((call) => call.id)).toEqual(ids.slice(-6, -3));
    const filtered = await t.admin.get("/provider-calls?service=kv&limit=1");
    expect(filtered.json<ProviderCall[]>().map((call) => call.service)).toEqual(["kv"]);
    expect(Number(filtered.headers.get("x-total-count"))).toBe(all.filter((call) => call.service === "kv").length);
    for (const bad of ["limit=0", "limit=1001", "limit=two", "before=-1", "limit=1.5"]) {
      const answer = await t.admin.get(`/provider-calls?${bad}`);
      expect([answer.status, answer.text]).toEqual([400, expect.stringMatching(/^(limit|before) must be a whole number from 1 to \d+\.$/)]);
    }
  });
});
