/**
 * Deploys, healers, the full health check and app tokens through HTTP, on the memory store and on
 * a real Redis; and the shapes of variant 2 (--api-variant 2).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ProviderError } from "provider-kit";
import { Api, manifest, STORES, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";
import type { LogEntry, ProviderCall } from "../../src/platform/domain/model.js";

interface DeployV1 {
  ID: string;
  App: string;
  Timestamp: string;
  Duration: number;
  Commit: string;
  Error: string;
  Image: string;
  Log: string;
  Origin: string;
  CanRollback: boolean;
  RemoveDate: string;
}

describe.each(STORES)("deploys, healers, ?check=all, app tokens (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  let unitBindsFail = false;
  const said: string[] = [];
  /** The unit calls the platform sent since `since` calls: `bind <ip>` / `unbind <ip>`. */
  const unitCallsSince = async (since: number) =>
    (await t.admin.get("/provider-calls?service=kv")).json<ProviderCall[]>()
      .slice(since)
      .filter((call) => call.path.endsWith("/bind"))
      .map((call) => `${call.method === "POST" ? "bind" : "unbind"} ${/unit-host=([\d.]+)/.exec(call.requestBody)![1]}`)
      .sort();
  const callCount = async () => (await t.admin.get("/provider-calls?service=kv")).json<ProviderCall[]>().length;
  const unitIps = async (app: string) => (await t.admin.get(`/apps/${app}`)).json<{ Units: Array<{ Ip: string }> }>().Units.map((unit) => unit.Ip);

  beforeAll(async () => {
    t = await startTestPlatform(kind, { say: (line) => said.push(line) });
    provider = await startTestProvider({
      bindUnit: async () => {
        if (unitBindsFail) throw new ProviderError("unit binds are down for maintenance", 500);
        return undefined;
      },
    });
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) })); // Variant A
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "go" } }));
    await t.admin.ok(t.admin.put("/apps/shop/units", { text: "1" }));
    await t.admin.ok(t.admin.put("/services/instances/kv1/shop"));
    await t.admin.ok(t.admin.post("/apps", { json: { name: "lonely", platform: "go" } }));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("deploys: new units told to the bound providers, a record with a Go duration, the units restarted in the log", async () => {
    const before = await unitIps("shop");
    const since = await callCount();
    const answer = await t.admin.ok(t.admin.post("/apps/shop/deploy", { json: { image: "registry.local/shop:v2" } }));
    const deploy = answer.json<DeployV1>();
    expect(deploy).toEqual({
      ID: expect.stringMatching(/^[0-9a-f]{24}$/),
      App: "shop",
      Timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00$/),
      Duration: expect.any(Number),
      Commit: "",
      Error: "",
      Image: "registry.local/shop:v2",
      Log: expect.stringContaining("deploy done"),
      Origin: "image",
      CanRollback: true,
      RemoveDate: "0001-01-01T00:00:00Z",
    });
    expect(Number.isInteger(deploy.Duration) && deploy.Duration > 0).toBe(true);
    const after = await unitIps("shop");
    expect(after).toHaveLength(2);
    expect(after.some((ip) => before.includes(ip))).toBe(false);
    expect(await unitCallsSince(since)).toEqual([...after.map((ip) => `bind ${ip}`), ...before.map((ip) => `unbind ${ip}`)].sort());
    const log = (await t.admin.get("/apps/shop/log?lines=8")).json<LogEntry[]>().map((entry) => entry.Message);
    expect(log[0]).toBe("deploying the image registry.local/shop:v2 to shop.localhost");
    expect(log.filter((line) => line.startsWith("restarting: unit"))).toHaveLength(2);
    expect(log.at(-1)).toBe("deploy done");

    const byCommit = (await t.admin.ok(t.admin.post("/apps/lonely/deploy", { json: { commit: "9f1c2ab" } }))).json<DeployV1>();
    expect(byCommit).toMatchObject({ Commit: "9f1c2ab", Image: "", Origin: "git", CanRollback: false });
    expect((await t.admin.post("/apps/shop/deploy", { json: {} })).status).toBe(400);
    expect((await t.admin.post("/apps/shop/deploy", { json: { image: "a", commit: "b" } })).status).toBe(400);
    expect((await t.admin.post("/apps/nope/deploy", { json: { image: "a" } })).status).toBe(404);
  });

  it("lists deploys newest first, by app and by service (apps bound to it), and shows one by id", async () => {
    const all = (await t.admin.get("/deploys")).json<DeployV1[]>();
    expect(all.map((deploy) => deploy.App)).toEqual(["lonely", "shop"]);
    expect((await t.admin.get("/deploys?app=shop")).json<DeployV1[]>().map((deploy) => deploy.App)).toEqual(["shop"]);
    expect((await t.admin.get("/deploys?service=kv")).json<DeployV1[]>().map((deploy) => deploy.App)).toEqual(["shop"]);
    expect((await t.admin.get("/deploys?service=none")).json()).toEqual([]);
    expect((await t.admin.get(`/deploys/${all[1]!.ID}`)).json()).toEqual(all[1]);
    const missing = await t.admin.get("/deploys/0123456789abcdef01234567");
    expect([missing.status, missing.text]).toEqual([404, 'Deploy "0123456789abcdef01234567" not found.']);
    expect((await t.admin.get("/deploys/not-an-id!")).status).toBe(400);
    expect((await t.admin.get("/deploys?app=Bad!")).status).toBe(400);
    const outsider = await t.admin.user("olga@example.com");
    expect((await outsider.get("/deploys")).json()).toEqual([]);
    expect((await outsider.get(`/deploys/${all[0]!.ID}`)).status).toBe(403);
  });

  it("leaves failed unit binds of a deploy to the bind-units healer, which sends them again and logs what it did", async () => {
    expect((await t.admin.get("/healers")).json()).toEqual([{ "bind-units": "/healers/bind-units" }, { "instance-status": "/healers/instance-status" }]);
    unitBindsFail = true;
    const deploy = (await t.admin.ok(t.admin.post("/apps/shop/deploy", { json: { image: "registry.local/shop:v3" } }))).json<DeployV1>();
    expect(deploy.Error).toBe("");
    expect(deploy.Log).toMatch(/failed to bind the unit shop-\d+ \(10\.10\.10\.\d+\) to the instance kv1: invalid response: unit binds are down for maintenance \(code: \d+\)/);
    expect(deploy.Log).toContain("2 unit call(s) failed: GET /healers/bind-units sends them again");

    unitBindsFail = false;
    const since = await callCount();
    const healed = await t.admin.ok(t.admin.get("/healers/bind-units"));
    const units = await unitIps("shop");
    expect(healed.text.trim().split("\n").sort()).toEqual(
      units.map((ip): unknown => expect.stringMatching(new RegExp(`^shop: bound the unit shop-\\d+ \\(${ip.replace(/\./g, "\\.")}\\) to the instance kv1$`))),
    );
    expect(await unitCallsSince(since)).toEqual(units.map((ip) => `bind ${ip}`).sort());
    const healerLog = (await t.admin.get("/apps/shop/log?lines=10&source=healer")).json<LogEntry[]>();
    expect(healerLog.map((entry) => entry.Message)).toEqual(healed.text.trim().split("\n"));
    expect(said.filter((line) => line.startsWith("healer bind-units: shop: bound"))).toHaveLength(2);
    // Nothing left: a second run sends nothing.
    expect((await t.admin.ok(t.admin.get("/healers/bind-units"))).text).toBe("nothing to do\n");
    // Removing units afterwards still unbinds the healed ones.
    const beforeRemoval = await callCount();
    await t.admin.ok(t.admin.delete("/apps/shop/units", { text: "1" }));
    expect(await unitCallsSince(beforeRemoval)).toEqual([`unbind ${units[1]}`]);
  });

  it("refreshes every instance's status from its provider with the instance-status healer", async () => {
    const healed = await t.admin.ok(t.admin.get("/healers/instance-status"));
    expect(healed.text).toBe('Service instance "kv1" is up\n');
    const calls = (await t.admin.get("/provider-calls?instance=kv1")).json<ProviderCall[]>();
    expect(`${calls.at(-1)!.method} ${calls.at(-1)!.path}`).toBe("GET /resources/kv1/status");
    expect((await t.admin.get("/services/instances/kv1")).json()).toMatchObject({ name: "kv1", status: 'Service instance "kv1" is up' });
    expect((await t.admin.get("/apps/shop/log?lines=1&source=healer")).json<LogEntry[]>()[0]!.Message).toBe('Service instance "kv1" is up');
    expect((await t.admin.get("/healers/nope")).status).toBe(404);
    expect((await t.admin.get("/healers/Bad!")).status).toBe(400);
    expect((await t.anonymous.get("/healers/bind-units")).status).toBe(401);
  });

  it("checks the store and, for a logged-in user, every provider with ?check=all, 500 when one is not WORKING", async () => {
    expect((await t.anonymous.get("/healthcheck/")).text).toBe("WORKING");
    const store = expect.stringMatching(new RegExp(`^Store \\(${kind}\\): WORKING \\(\\d+(\\.\\d+)?(ns|µs|ms|s)\\)$`));
    // Provider lines name services and repeat their answers: not for anonymous callers.
    expect((await t.anonymous.get("/healthcheck/?check=all")).text.trim().split("\n")).toEqual([store]);
    const healthy = await t.admin.get("/healthcheck/?check=all");
    expect(healthy.status).toBe(200);
    expect(healthy.text.trim().split("\n")).toEqual([store, expect.stringMatching(/^Provider kv: WORKING \(\d+(\.\d+)?(ns|µs|ms|s)\)$/)]);

    // A provider without /healthcheck is checked through its plans.
    const bare: Server = createServer((req, res) => {
      res.writeHead(req.url === "/resources/plans" ? 200 : 404, { "Content-Type": "application/json" });
      res.end("[]");
    });
    await new Promise<void>((done) => bare.listen(0, "127.0.0.1", done));
    const port = (bare.address() as AddressInfo).port;
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("plain", `http://127.0.0.1:${port}`) }));
      await t.admin.ok(t.admin.post("/services", { text: manifest("gone", "http://127.0.0.1:1") }));
      const sick = await t.admin.get("/healthcheck/?check=all");
      expect(sick.status).toBe(500);
      const lines = sick.text.trim().split("\n");
      expect(lines).toContainEqual(expect.stringMatching(/^Provider gone: fail - the provider did not answer \(.+\)$/));
      expect(lines).toContainEqual(expect.stringMatching(/^Provider plain: WORKING \(/));
      // Health probes stay out of the call timeline.
      expect((await t.admin.get("/provider-calls?service=plain")).json<ProviderCall[]>()).toEqual([]);
    } finally {
      await t.admin.ok(t.admin.delete("/services/gone"), 204);
      await t.admin.ok(t.admin.delete("/services/plain"), 204);
      await new Promise((done) => bare.close(done));
    }
  });

  it("creates app tokens (admins only), exported as TSURU_APP_TOKEN, that act on that app's routes only", async () => {
    const answer = await t.admin.ok(t.admin.post("/tokens", { json: { client: "lonely", export: true } }));
    const token = answer.json<{ Token: string; Creation: string; Expires: number; AppName: string }>();
    expect(token).toEqual({ Token: expect.stringMatching(/^[0-9a-f]{64}$/), Creation: expect.any(String), Expires: 0, AppName: "lonely" });
    const env = (await t.admin.get("/apps/lonely/env")).json<Array<{ name: string; public: boolean }>>();
    expect(env).toContainEqual({ name: "TSURU_APP_TOKEN", value: "*** (private variable)", public: false });
    const output = await t.admin.ok(t.admin.post("/apps/lonely/run?once=true", { text: 'printf %s "$TSURU_APP_TOKEN"' }));
    expect(output.text).toBe(token.Token);

    const app = new Api(t.url, token.Token);
    expect((await app.ok(app.get("/apps/lonely"))).json()).toMatchObject({ Name: "lonely" });
    await app.ok(app.get("/apps/lonely/log?lines=1"));
    expect((await app.get("/apps/shop")).status).toBe(401);
    expect((await app.get("/apps")).status).toBe(401);
    expect((await app.get("/users/info")).status).toBe(401);

    const form = await t.admin.post("/tokens", { text: "client=lonely&export=false", headers: { "Content-Type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(200);
    const user = await t.admin.user("pia@example.com");
    expect((await user.post("/tokens", { json: { client: "lonely" } })).status).toBe(403);
    expect((await t.admin.post("/tokens", { json: { client: "nope" } })).status).toBe(404);
    expect((await t.admin.post("/tokens", { json: { export: true } })).status).toBe(400);
  });
});

describe("--api-variant 2: the shapes of variant 2 where the variants differ", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform("memory", { config: { apiVariant: 2 } });
  });
  afterAll(() => t.stop());

  it("answers deploys with Id and Diff, apps without Pool; both variants' paths are served", async () => {
    await t.admin.ok(t.admin.post("/apps", { json: { name: "old", platform: "go" } }));
    const deploy = (await t.admin.ok(t.admin.post("/apps/old/deploy", { json: { commit: "abc123" } }))).json<Record<string, unknown>>();
    expect(Object.keys(deploy).sort()).toEqual(["App", "Commit", "Diff", "Duration", "Error", "Id", "Timestamp"]);
    expect((await t.admin.get(`/deploys/${String(deploy.Id)}`)).json()).toEqual(deploy);
    const app = (await t.admin.get("/apps/old")).json<Record<string, unknown>>();
    expect(app).not.toHaveProperty("Pool");
    expect(app).toMatchObject({ Name: "old", Framework: "go" });
    expect((await t.admin.get("/apps/old/logs?lines=1")).status).toBe(200);
    expect((await t.admin.get("/apps/old/log?lines=1")).status).toBe(200);
    expect((await t.admin.get("/pools")).status).toBe(200);
  });
});
