/**
 * Today's command-line client (`tsuru` 1.34) against the platform: each request replayed as the
 * client sends it (method, versioned path, `Authorization: bearer`, form Content-Type, the form
 * keys in Go's sorted order, platform-notes.md) and each answer checked the way the client parses
 * it. On the memory store and on a real Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError } from "provider-kit";
import { ADMIN, readStream, STORES, startTestPlatform, startTestProvider, tsuru, type TestPlatform, type TestProvider } from "./helpers.js";
import { PASSWORD, USER } from "../../../../test/support/fake-provider.js";

describe.each(STORES)("today's tsuru client (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  let failBind = false;
  let failUnbind = false;
  let token: string;
  const client = (method: string, path: string, form?: Record<string, string | string[]>) => tsuru(t.url, token, method, path, form);

  beforeAll(async () => {
    t = await startTestPlatform(kind);
    provider = await startTestProvider({
      bindApp: async () => {
        if (failBind) throw new ProviderError("no more room on this plan", 500);
        return { KV_URL: "kv://10.0.0.1" };
      },
      unbindApp: async () => {
        if (failUnbind) throw new ProviderError("this binding's user is gone", 500);
      },
    });
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("login: GET /1.18/auth/schemes, then POST /1.0/users/<email>/tokens with form password", async () => {
    const schemes = await tsuru(t.url, undefined, "GET", "/1.18/auth/schemes");
    expect(schemes.status).toBe(200);
    expect(JSON.parse(schemes.text)).toEqual([{ name: "native", default: true, data: {} }]);
    const login = await tsuru(t.url, undefined, "POST", `/1.0/users/${ADMIN.email}/tokens`, { password: ADMIN.password });
    expect(login.status).toBe(200);
    token = (JSON.parse(login.text) as { token: string }).token;
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    const wrong = await tsuru(t.url, undefined, "POST", `/1.0/users/${ADMIN.email}/tokens`, { password: "wrong-one" });
    expect(wrong.status).toBe(401);
  });

  it("version: GET /1.0/info", async () => {
    const info = await client("GET", "/1.0/info");
    expect(JSON.parse(info.text)).toEqual({ version: "0.0.0-test" });
  });

  it("service-create: POST /1.0/services with the manifest's fields as a form", async () => {
    const created = await client("POST", "/1.0/services", {
      id: "kv",
      password: PASSWORD,
      username: USER,
      team: "admin",
      endpoint: provider.running.url,
      "multi-cluster": "false",
    });
    expect(created.status).toBe(201);
    expect((await client("POST", "/1.0/services", { id: "kv", password: PASSWORD, endpoint: provider.running.url })).status).toBe(500);
    const missing = await client("POST", "/1.0/services", { id: "other", endpoint: provider.running.url });
    expect([missing.status, missing.text]).toEqual([400, "You must provide a(n) password in the manifest file."]);
  });

  it("service-instance-add: POST /1.0/services/<s>/instances with form name, plan, owner, description, pool, tag, parameters.*, all handed to the provider's create", async () => {
    const added = await client("POST", "/1.0/services/kv/instances", {
      description: "the shop's cache",
      name: "kv1",
      owner: "",
      plan: "small",
      pool: "",
      tag: ["a", "b"],
      "parameters.size": "1",
      "parameters.tls.mode": "strict",
    });
    expect(added.status).toBe(201);
    // The endpoint's Create: createServicePayload's description, tags and parameters.
    expect(provider.received.find((call) => call.handler === "create")!.request).toEqual({
      instance: "kv1",
      plan: "small",
      team: "admin",
      description: "the shop's cache",
      tags: ["a", "b"],
      parameters: { size: "1", tls: { mode: "strict" } },
    });
    const info = JSON.parse((await client("GET", "/1.0/services/kv/instances/kv1")).text) as Record<string, unknown>;
    expect(info).toMatchObject({ Description: "the shop's cache", Tags: ["a", "b"], Parameters: { size: "1", tls: { mode: "strict" } } });
    expect((await client("POST", "/1.0/services/nope/instances", { name: "kv2" })).status).toBe(404);
    expect((await client("POST", "/1.0/services/kv/instances", { name: "kv1" })).status).toBe(409);
  });

  it("app-create: POST /1.0/apps with form fields answers 201 (createApp); the answer is a JSON object of strings", async () => {
    const created = await client("POST", "/1.0/apps", { description: "", name: "web", plan: "", platform: "go", pool: "", tag: ["x"], teamOwner: "" });
    expect(created.status).toBe(201);
    const answer = JSON.parse(created.text) as Record<string, unknown>;
    expect(Object.values(answer).every((value) => typeof value === "string")).toBe(true);
    expect(answer).toMatchObject({ status: "success", repository_url: "git@localhost:web.git" });
    expect((await client("POST", "/1.0/apps", { name: "web", platform: "go" })).status).toBe(409);
  });

  it("service-instance-bind: PUT /1.13/services/<s>/instances/<i>/apps/<a> streams messages; env-get shows the variables", async () => {
    const bound = readStream(await client("PUT", "/1.13/services/kv/instances/kv1/apps/web", { noRestart: "false" }));
    expect(bound.error).toBeUndefined();
    expect(bound.messages).toContain("KV_URL\n");
    const env = await client("GET", "/1.0/apps/web/env");
    expect(env.status).toBe(200);
    const variables = JSON.parse(env.text) as Array<{ name: string; value: string; public: boolean }>;
    expect(variables).toContainEqual({ name: "KV_URL", value: "*** (private variable)", public: false });
    expect(variables).toContainEqual({ name: "TSURU_APPNAME", value: "web", public: true });
    // Wrong names are still plain HTTP errors, which the client shows as they are.
    expect((await client("PUT", "/1.13/services/kv/instances/kv1/apps/nope", { noRestart: "false" })).status).toBe(404);
    expect((await client("PUT", "/1.13/services/other/instances/kv1/apps/web", { noRestart: "false" })).status).toBe(404);
  });

  it("env-set: POST /1.0/apps/<a>/env with form Envs.N.Name/Value streams messages; a refused name is a 400", async () => {
    const set = readStream(await client("POST", "/1.0/apps/web/env", { "Envs.0.Name": "MODE", "Envs.0.Value": "a b=c", NoRestart: "false", Private: "false" }));
    expect(set.error).toBeUndefined();
    expect(JSON.parse((await client("GET", "/1.0/apps/web/env")).text)).toContainEqual({ name: "MODE", value: "a b=c", public: true });
    // setAppEnv validates the names before it streams: a 400.
    const refused = await client("POST", "/1.0/apps/web/env", { "Envs.0.Name": "TSURU_X", "Envs.0.Value": "1", NoRestart: "false", Private: "false" });
    expect([refused.status, refused.text.trim()]).toEqual([400, 'Cannot set the variable: "TSURU_X" is one of the TSURU_* variables the platform sets.']);
  });

  it("service-instance-unbind: DELETE on the same path streams; a provider failure before any message is a plain 500", async () => {
    const unbound = readStream(await client("DELETE", "/1.13/services/kv/instances/kv1/apps/web", { noRestart: "false" }));
    expect(unbound.error).toBeUndefined();
    expect((JSON.parse((await client("GET", "/1.0/apps/web/env")).text) as { name: string }[]).map((variable) => variable.name)).not.toContain("KV_URL");
    failBind = true;
    const failed = await client("PUT", "/1.13/services/kv/instances/kv1/apps/web", { noRestart: "false" });
    expect([failed.status, failed.text.trim()]).toEqual([500, 'Failed to bind the instance "kv/kv1" to the app "web": invalid response: no more room on this plan (code: 500) ("kv1" is up)']);
    failBind = false;
  });

  it("serves every route under /1.0, /1.13 and /1.18 too, and the client's own routes unprefixed where the spec has no such path", async () => {
    for (const prefix of ["/1.0", "/1.13", "/1.18", ""]) expect((await client("GET", `${prefix}/teams`)).status).toBe(200);
    expect((await tsuru(t.url, undefined, "GET", "/auth/schemes")).status).toBe(200);
    const bound = readStream(await client("PUT", "/services/kv/instances/kv1/apps/web", { noRestart: "false" }));
    expect(bound.error).toBeUndefined();
    // POST /services unprefixed stays the spec's raw YAML route.
    expect((await client("POST", "/services", { id: "x" })).status).toBe(400);
    expect((await client("GET", "/2.0/teams")).status).toBe(404);
  });

  it("service-instance-unbind with ?force=true on the versioned path: the failure passed over is among the messages", async () => {
    failUnbind = true;
    const path = "/1.13/services/kv/instances/kv1/apps/web";
    const refused = await client("DELETE", `${path}?noRestart=false`);
    expect(refused.status).toBe(500);
    expect(refused.text.trim()).toBe('Failed to unbind ("/resources/kv1/bind-app"): invalid response: this binding\'s user is gone (code: 500) (if the provider can no longer undo this binding, unbind with ?force=true)');
    const forced = readStream(await client("DELETE", `${path}?noRestart=false&force=true`));
    expect(forced.error).toBeUndefined();
    expect(forced.messages).toEqual([
      "---- Unbinding the instance kv1 from the app web ----\n",
      '[unbind-app-endpoint] ignored error due to force: Failed to unbind ("/resources/kv1/bind-app"): invalid response: this binding\'s user is gone (code: 500)\n',
      "---- Restarting the app ----\n",
      '\nInstance "kv1" is not bound to the app "web" anymore.\n',
    ]);
    expect((JSON.parse((await client("GET", "/1.0/apps/web/env")).text) as Array<{ name: string }>).map((variable) => variable.name)).not.toContain("KV_URL");
    failUnbind = false;
  });
});
