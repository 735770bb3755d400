/**
 * The platform's proxy and the 1.31 service manifest, over real HTTP, against a createProvider
 * provider with actions: each proxy route reaches the provider with the service's credentials,
 * the platform's user on writes only, and is in the call timeline; calls the permission rules
 * refuse never reach the provider; the manifest is validated, and its actions authorised by grants.
 */
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { declareActions, instanceAction, serviceAction } from "provider-kit";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { type Api, manifest, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";

/** What each action saw: the provider's auth let it through only with the service's credentials. */
interface Seen {
  action: string;
  instance?: string;
  user?: string;
  detail?: unknown;
}

const seen: Seen[] = [];

const actions = declareActions({
  rotate: instanceAction({
    name: "apps.rotate-password",
    method: "POST",
    path: "/apps/:app/rotate-password",
    lock: false,
    body: z.object({ length: z.coerce.number().int() }),
  }),
  memory: instanceAction({ name: "memory", method: "GET", path: "/memory", lock: false, query: z.object({ unit: z.string().default("bytes") }) }),
  addUser: instanceAction({ name: "users.create", method: "POST", path: "/users", lock: false }),
  big: instanceAction({ name: "big", method: "GET", path: "/big", lock: false }),
  regions: serviceAction({ name: "regions", method: "GET", path: "/regions" }),
  note: serviceAction({ name: "note", method: "POST", path: "/notes" }),
}).implement({
  rotate: ({ instance, params, body }, ctx) => {
    seen.push({ action: "rotate", instance, user: ctx.user, detail: { app: params.app, length: body.length } });
    return { app: params.app, length: body.length };
  },
  memory: ({ instance, query }, ctx) => {
    seen.push({ action: "memory", instance, user: ctx.user, detail: query.unit });
    return { unit: query.unit };
  },
  addUser: ({ instance }, ctx) => {
    seen.push({ action: "addUser", instance, user: ctx.user });
  },
  big: () => "x".repeat(1.5 * (1 << 20)),
  regions: (_request, ctx) => {
    seen.push({ action: "regions", user: ctx.user });
    return ["east", "west"];
  },
  note: (_request, ctx) => {
    seen.push({ action: "note", user: ctx.user });
    return { noted: true };
  },
});

/** A GET with its path exactly as written. */
function rawGet(base: string, path: string, token: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const request = http.get({ hostname, port, path, headers: { Authorization: `bearer ${token}` } }, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () => resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    request.on("error", reject);
  });
}

const FORM = { "Content-Type": "application/x-www-form-urlencoded" };

describe("the proxy and service actions (memory store)", () => {
  let t: TestPlatform;
  let provider: TestProvider;
  /** In team `devs`, which has access to the service but not to the instance. */
  let alice: Api;
  /** In team `ops`, which has access to the service and to the instance. */
  let bob: Api;

  beforeAll(async () => {
    t = await startTestPlatform("memory");
    provider = await startTestProvider({ actions });
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "store1", service_name: "kv" } }), 201);
    alice = await t.admin.user("alice@example.com");
    bob = await t.admin.user("bob@example.com");
    await alice.ok(alice.post("/teams", { json: { name: "devs" } }));
    await bob.ok(bob.post("/teams", { json: { name: "ops" } }));
    for (const team of ["devs", "ops"]) await t.admin.ok(t.admin.put(`/services/kv/${team}`));
    await t.admin.ok(t.admin.put("/services/instances/permission/store1/ops"));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  const calls = async () => (await t.admin.get("/provider-calls?service=kv")).json<ProviderCall[]>();

  /** `work` answers `status` and neither the provider nor its timeline sees anything. */
  async function refused(work: Promise<{ status: number; text: string }>, status: number): Promise<string> {
    const [before, timeline] = [seen.length, (await calls()).length];
    const answer = await work;
    expect([answer.status, answer.text], answer.text).toEqual([status, expect.any(String)]);
    expect(seen.length).toBe(before);
    expect((await calls()).length).toBe(timeline);
    return answer.text;
  }

  it("proxy v1 reaches the instance action with the service's credentials and the user on writes", async () => {
    const answer = await t.admin.ok(
      t.admin.post("/services/kv/proxy/store1?callback=/resources/store1/apps/web/rotate-password", { text: "length=20", headers: FORM }),
    );
    expect(answer.json()).toEqual({ app: "web", length: 20 });
    expect(answer.headers.get("content-security-policy")).toBe("sandbox");
    expect(seen.at(-1)).toEqual({ action: "rotate", instance: "store1", user: "admin@example.com", detail: { app: "web", length: 20 } });

    const call = (await calls()).at(-1)!;
    expect(call).toMatchObject({ method: "POST", path: "/resources/store1/apps/web/rotate-password", instance: "store1", status: 200, requestBody: "length=20" });
    expect(call.requestHeaders).toMatchObject({ Authorization: "Basic <redacted>", "X-Tsuru-User": "admin@example.com", "X-Tsuru-Eventid": expect.any(String) });
    expect(JSON.stringify(call)).not.toContain(t.admin.token);

    // A read: the query forwarded without the callback, and no user named.
    expect((await t.admin.ok(t.admin.get("/services/kv/proxy/store1?callback=/resources/store1/memory&unit=mb"))).json()).toEqual({ unit: "mb" });
    expect(seen.at(-1)).toEqual({ action: "memory", instance: "store1", user: undefined, detail: "mb" });
    expect((await calls()).at(-1)).toMatchObject({ method: "GET", path: "/resources/store1/memory?unit=mb" });
    expect((await calls()).at(-1)!.requestHeaders).not.toHaveProperty("X-Tsuru-User");
  });

  it("proxy v2 reaches the instance action; the provider's status and body are the answer", async () => {
    expect((await bob.ok(bob.get("/1.20/services/kv/resources/store1/memory?unit=kb"))).json()).toEqual({ unit: "kb" });
    // In the call timeline, under the proxy request that sent it (the console shows both).
    expect((await calls()).at(-1)).toMatchObject({
      method: "GET",
      path: "/resources/store1/memory?unit=kb",
      instance: "store1",
      status: 200,
      operation: { label: "GET /1.20/services/kv/resources/store1/memory" },
    });
    const invalid = await bob.post("/1.20/services/kv/resources/store1/apps/web/rotate-password", { text: "length=x", headers: FORM });
    expect(invalid.status).toBe(400);
    expect(invalid.text).toMatch(/length/);
    expect((await bob.get("/1.20/services/kv/resources/store1/nothing-here")).status).toBe(404);
  });

  it("refuses, before any call to the provider, users without access, the platform's own calls and paths outside the instance", async () => {
    expect(await refused(alice.get("/1.20/services/kv/resources/store1/memory"), 403)).toBe('You have no access to the service instance "store1".');
    await refused(alice.get("/services/kv/proxy/store1?callback=/resources/store1/memory"), 403);
    await refused(t.anonymous.get("/1.20/services/kv/resources/store1/memory"), 401);
    await refused(t.admin.get("/1.20/services/nope/resources/store1/memory"), 404);
    await refused(t.admin.get("/1.20/services/kv/resources/nope/memory"), 404);
    for (const path of ["bind-app", "bind", "bind-job", ""]) {
      expect(await refused(t.admin.post(`/1.20/services/kv/resources/store1/${path}`), 400)).toMatch(/^proxy request POST ".*" is forbidden/);
    }
    await refused(t.admin.delete("/services/kv/proxy/store1?callback=/resources/store1"), 400);
    for (const callback of ["/resources/other/memory", "/resources/store1/../other/memory", "http://evil.example/resources/store1/memory", "//evil.example/x", "/memory"]) {
      await refused(t.admin.get(`/services/kv/proxy/store1?callback=${encodeURIComponent(callback)}`), 400);
    }
    // fetch resolves "%2e%2e" itself: sent as written, express decodes it to "..".
    await refused(rawGet(t.url, "/1.20/services/kv/resources/store1/%2e%2e/status", t.admin.token!), 400);
    // Pages of other origins cannot make the platform call a provider.
    const origin = "http://evil.example";
    await refused(t.admin.post("/1.20/services/kv/resources/store1/users", { headers: { Origin: origin } }), 403);
  });

  it("the service proxy is its owners', authenticated-resources any user's", async () => {
    expect((await t.admin.ok(t.admin.get("/services/proxy/service/kv?callback=/authenticated-resources/regions"))).json()).toEqual(["east", "west"]);
    expect(await refused(alice.get("/services/proxy/service/kv?callback=/authenticated-resources/regions"), 403)).toMatch(/teams owning the service "kv"/);
    await refused(t.admin.get("/services/proxy/service/kv?callback=/a/../b"), 400);

    expect((await alice.ok(alice.get("/1.21/services/kv/authenticated-resources/regions"))).json()).toEqual(["east", "west"]);
    await alice.ok(alice.post("/1.21/services/kv/authenticated-resources/notes"));
    expect(seen.at(-1)).toEqual({ action: "note", user: "alice@example.com" });
    expect((await calls()).at(-1)).toMatchObject({ method: "POST", path: "/authenticated-resources/notes", status: 200 });
    await refused(t.anonymous.get("/1.21/services/kv/authenticated-resources/regions"), 401);
  });

  it("bounds the provider's answer", async () => {
    const answer = await t.admin.get("/1.20/services/kv/resources/store1/big");
    expect([answer.status, answer.text]).toEqual([502, "The provider's answer is larger than the 1 MiB the platform forwards."]);
  });

  it("validates the manifest as the platform does, and lets only the service's owners write it", async () => {
    const put = (json: unknown, api = t.admin) => api.put("/1.31/services/kv/manifest", { json });
    const op = (method: string, path: string, action: string) => ({ method, path, action });
    const problems: Array<[unknown, RegExp]> = [
      [[], /JSON object/],
      [{ operations: [op("FETCH", "/x", "x")] }, /Invalid manifest method "FETCH" for operation "x"/],
      [{ operations: [op("GET", "/x", "Bad_Name")] }, /Invalid manifest action "Bad_Name"/],
      [{ operations: [op("GET", "/x", "")] }, /Manifest action is required/],
      [{ operations: [op("GET", " ", "x")] }, /Manifest path is required for operation "x"/],
      [{ operations: [op("GET", "/x", "a"), op("POST", "/y", "a")] }, /Duplicate manifest operation action "a"/],
      [{ operations: [op("GET", "/x", "a"), op("GET", "x", "b")] }, /Duplicate manifest route GET x/],
      [{ operations: [op("GET", "/x/{a}", "a"), op("GET", "/{b}/y", "b")] }, /match the same calls and neither is more specific/],
      [{ operations: [op("GET", "/x/{a}", "a"), op("GET", "/x/{b}", "b")] }, /neither is more specific/],
      [{ operations: [op("GET", "/x/{a...}/y", "a")] }, /may only end it/],
      [{ operations: [op("GET", "/x/{a}/{a}", "a")] }, /twice/],
      [{ operations: [op("GET", "/x/pre{a}", "a")] }, /neither a literal nor/],
      [{ enabled: "yes" }, /"enabled" must be true or false/],
    ];
    for (const [json, message] of problems) {
      const answer = await put(json);
      expect([answer.status, answer.text], JSON.stringify(json)).toEqual([400, expect.stringMatching(message)]);
    }
    expect((await t.admin.get("/1.31/services/kv/manifest")).json()).toBeNull();
    // More specific patterns may overlap general ones.
    const fine = { enabled: true, strict_actions: true, legacy_compat: false, operations: [op("GET", "/x/{a}", "a"), op("GET", "/x/me", "b"), op("GET", "/x/", "c")] };
    expect((await put(fine, bob)).status).toBe(403);
    await t.admin.ok(put(fine));
    expect((await alice.ok(alice.get("/1.31/services/kv/manifest"))).json()).toEqual(fine);
  });

  it("checks who writes a manifest before reading it, and bounds its operations and paths", async () => {
    const stored = (await t.admin.get("/1.31/services/kv/manifest")).text;
    const op = (index: number) => ({ method: "GET", path: `/x/${index}`, action: `a${index}` });
    const invalid = { operations: [...Array.from({ length: 2_000 }, (_, index) => op(index)), { method: "FETCH", path: "/y", action: "y" }] };
    // A user with no team, to a service that does not exist: answered on those grounds, the manifest unread.
    const stranger = await t.admin.user("stranger@example.com");
    const unknown = await stranger.put("/1.31/services/nothing/manifest", { json: invalid });
    expect([unknown.status, unknown.text]).toEqual([404, 'Service "nothing" not found.']);
    expect((await bob.put("/1.31/services/kv/manifest", { json: invalid })).status).toBe(403);

    const many = await t.admin.put("/1.31/services/kv/manifest", { json: { operations: Array.from({ length: 101 }, (_, index) => op(index)) } });
    expect([many.status, many.text]).toEqual([400, expect.stringMatching(/^The manifest has 101 operations, more than the 100 the platform takes: /)]);
    const long = await t.admin.put("/1.31/services/kv/manifest", { json: { operations: [{ method: "GET", path: `/${"a/".repeat(200)}`, action: "long" }] } });
    expect([long.status, long.text]).toEqual([400, "The path of manifest operation 1 is 401 characters long, more than 256."]);
    expect((await t.admin.get("/1.31/services/kv/manifest")).text).toBe(stored);
  });

  it("with strict_actions, only the holders of an action's permission may call it; grants on a leading part cover the rest", async () => {
    const strict = {
      enabled: true,
      strict_actions: true,
      legacy_compat: false,
      operations: [
        { method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" },
        { method: "GET", path: "/memory", action: "memory" },
      ],
    };
    await t.admin.ok(t.admin.put("/1.31/services/kv/manifest", { json: strict }));
    const rotate = (api: Api) => api.post("/1.20/services/kv/resources/store1/apps/web/rotate-password", { text: "length=16", headers: FORM });

    expect(await refused(rotate(bob), 403)).toMatch(/needs the permission service-action\.kv\.apps\.rotate-password/);
    expect(await refused(bob.post("/1.20/services/kv/resources/store1/users"), 403)).toMatch(/strict_actions.*POST \/users matches none/);
    // The admin team may do anything, as the platform's global roles.
    await t.admin.ok(rotate(t.admin));

    expect((await bob.put("/1.31/services/kv/actions/apps/ops")).status).toBe(403);
    expect((await t.admin.put("/1.31/services/kv/actions/nope/ops")).status).toBe(404);
    await t.admin.ok(t.admin.put("/1.31/services/kv/actions/apps/ops"));
    expect((await t.admin.put("/1.31/services/kv/actions/apps/ops")).status).toBe(409);
    await bob.ok(rotate(bob));
    expect(seen.at(-1)).toMatchObject({ action: "rotate", user: "bob@example.com" });
    // A grant reaches the instances its team has access to: devs has none.
    await t.admin.ok(t.admin.put("/1.31/services/kv/actions/apps/devs"));
    await refused(rotate(alice), 403);

    expect((await t.admin.ok(t.admin.get("/1.31/services/kv/actions"))).json()).toEqual({ "service-action.kv.apps": ["ops", "devs"] });
    await t.admin.ok(t.admin.delete("/1.31/services/kv/actions/apps/ops"));
    expect((await t.admin.delete("/1.31/services/kv/actions/apps/ops")).status).toBe(404);
    await refused(rotate(bob), 403);
  });

  it("refuses a manifest that would orphan granted actions, naming them", async () => {
    await t.admin.ok(t.admin.put("/1.31/services/kv/actions/memory/ops"));
    const answer = await t.admin.put("/1.31/services/kv/manifest", {
      json: { enabled: true, strict_actions: true, operations: [{ method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" }] },
    });
    expect(answer.status).toBe(409);
    expect(answer.json()).toEqual({ service: "kv", conflicts: [{ action: "memory", teams: ["ops"] }] });
    // The stored manifest stays as it was.
    expect((await t.admin.get("/1.31/services/kv/manifest")).json<{ operations: unknown[] }>().operations).toHaveLength(2);
    await t.admin.ok(t.admin.delete("/1.31/services/kv/actions/memory/ops"));
  });

  it("without strict_actions, a call matching no operation follows the general rule; legacy_compat opens matched ones to it", async () => {
    const loose = (legacy: boolean) => ({
      enabled: true,
      strict_actions: false,
      legacy_compat: legacy,
      operations: [{ method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" }, { method: "GET", path: "/memory", action: "memory" }],
    });
    await t.admin.ok(t.admin.put("/1.31/services/kv/manifest", { json: loose(false) }));
    await bob.ok(bob.post("/1.20/services/kv/resources/store1/users"), 204);
    expect(seen.at(-1)).toEqual({ action: "addUser", instance: "store1", user: "bob@example.com" });
    await refused(alice.post("/1.20/services/kv/resources/store1/users"), 403);
    await refused(bob.get("/1.20/services/kv/resources/store1/memory"), 403);

    await t.admin.ok(t.admin.put("/1.31/services/kv/manifest", { json: loose(true) }));
    await bob.ok(bob.get("/1.20/services/kv/resources/store1/memory"));
    await refused(alice.get("/1.20/services/kv/resources/store1/memory"), 403);
  });
});
