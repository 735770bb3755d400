/**
 * The rest of the spec's app routes through HTTP, on the memory store and on a real Redis: swap,
 * the app's log (and variant 2's /logs), pools and platforms from the platform's configuration.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manifest, STORES, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";
import { unitAddress } from "../../src/platform/domain/apps.js";
import { parsePool } from "../../src/platform/domain/config.js";
import type { LogEntry } from "../../src/platform/domain/model.js";

describe.each(STORES)("apps: swap, log, pools, platforms (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  beforeAll(async () => {
    t = await startTestPlatform(kind, {
      config: { pools: [parsePool("local"), parsePool("gpu=ml")], platforms: ["go", "python"] },
    });
    provider = await startTestProvider();
    await t.admin.ok(t.admin.post("/services", { text: manifest("today", provider.running.url, { variant: "current" }) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "now1", service_name: "today" } }), 201);
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("writes the platform's own actions to the app's log, newest last, filtered by source and unit", async () => {
    await t.admin.ok(t.admin.post("/apps", { json: { name: "logged", platform: "go" } }));
    await t.admin.ok(t.admin.post("/apps/logged/env", { json: { envs: [{ name: "MODE", value: "x" }] } }));
    await t.admin.ok(t.admin.put("/apps/logged/units", { text: "1" }));
    await t.admin.ok(t.admin.get("/apps/logged/restart"));
    await t.admin.ok(t.admin.put("/services/instances/now1/logged"));
    await t.admin.ok(t.admin.delete("/services/instances/now1/logged"));
    await t.admin.ok(t.admin.post("/apps/logged/run", { text: "echo hello from $TSURU_UNIT; echo bye" }));
    const entries = (await t.admin.ok(t.admin.get("/apps/logged/log?lines=100"))).json<LogEntry[]>();
    for (const entry of entries) {
      expect(Object.keys(entry).sort()).toEqual(["AppName", "Date", "Message", "Source", "Unit"]);
      expect(entry.Date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(entry.AppName).toBe("logged");
    }
    const messages = entries.map((entry) => entry.Message);
    expect(messages.slice(0, 6)).toEqual([
      "app created on team admin",
      "setting env vars MODE; restarting app",
      expect.stringMatching(/^added 1 unit\(s\): logged-\d+$/),
      "restarting app (2 units)",
      expect.stringMatching(/^bound to the instance now1 of today/),
      "unbound from the instance now1; restarting app",
    ]);
    const units = (await t.admin.get("/apps/logged")).json<{ Units: Array<{ Name: string }> }>().Units.map((unit) => unit.Name);
    const runs = entries.filter((entry) => entry.Source === "app-run");
    expect(runs.map((entry) => [entry.Unit, entry.Message])).toEqual(units.flatMap((unit) => [[unit, `hello from ${unit}`], [unit, "bye"]]));

    expect((await t.admin.get("/apps/logged/log?lines=2")).json<LogEntry[]>()).toEqual(entries.slice(-2));
    expect((await t.admin.get("/apps/logged/log?lines=10&source=app-run")).json()).toEqual(runs);
    expect((await t.admin.get(`/apps/logged/log?lines=10&unit=${units[1]}`)).json()).toEqual(runs.slice(2));
    expect((await t.admin.get("/apps/logged/logs?lines=100")).json()).toEqual(entries);
    const noLines = await t.admin.get("/apps/logged/log");
    expect([noLines.status, noLines.text]).toEqual([400, "Give the number of lines to show: ?lines=<a whole number>."]);
    expect((await t.admin.get("/apps/logged/log?lines=ten")).status).toBe(400);
    expect((await t.admin.get("/apps/nope/log?lines=1")).status).toBe(404);
  });

  it("swaps the addresses of two apps, with a log entry on each", async () => {
    await t.admin.ok(t.admin.post("/apps", { json: { name: "blue", platform: "go" } }));
    await t.admin.ok(t.admin.post("/apps", { json: { name: "green", platform: "go" } }));
    await t.admin.ok(t.admin.put("/swap?app1=blue&app2=green"));
    const ip = async (app: string) => (await t.admin.get(`/apps/${app}`)).json<{ Ip: string }>().Ip;
    expect([await ip("blue"), await ip("green")]).toEqual(["green.localhost", "blue.localhost"]);
    expect((await t.admin.get("/apps")).json<Array<{ Name: string; Ip: string }>>().filter((app) => app.Name === "blue")[0]!.Ip).toBe("green.localhost");
    expect((await t.admin.get("/apps/blue/log?lines=1")).json<LogEntry[]>()[0]!.Message).toBe("address swapped with green: now green.localhost");
    expect((await t.admin.get("/apps/green/log?lines=1")).json<LogEntry[]>()[0]!.Message).toBe("address swapped with blue: now blue.localhost");

    expect((await t.admin.put("/swap?app1=blue&app2=nope")).status).toBe(404);
    expect((await t.admin.put("/swap?app1=blue")).status).toBe(400);
    expect((await t.admin.put("/swap?app1=blue&app2=blue")).status).toBe(400);
    const outsider = await t.admin.user("oscar@example.com");
    await outsider.ok(outsider.post("/teams", { json: { name: "oscars" } }));
    await outsider.ok(outsider.post("/apps", { json: { name: "oscar-app", platform: "go" } }));
    expect((await outsider.put("/swap?app1=oscar-app&app2=blue")).status).toBe(403);
    expect(await ip("blue")).toBe("green.localhost");
  });

  it("lists the pools each team may use, places apps in them, and sends the pool to current providers", async () => {
    const mia = await t.admin.user("mia@example.com");
    await mia.ok(mia.post("/teams", { json: { name: "ml" } }));
    expect((await mia.get("/pools")).json()).toEqual([{ Team: "ml", Pools: ["local", "gpu"] }]);
    expect((await t.admin.get("/pools")).json()).toEqual(expect.arrayContaining([{ Team: "admin", Pools: ["local"] }, { Team: "ml", Pools: ["local", "gpu"] }]));

    await mia.ok(mia.post("/apps", { json: { name: "trainer", platform: "python", pool: "gpu" } }));
    expect((await mia.get("/apps/trainer")).json()).toMatchObject({ Pool: "gpu" });
    const refused = await t.admin.post("/apps", { json: { name: "sneaky", platform: "go", pool: "gpu" } });
    expect([refused.status, refused.text]).toEqual([400, 'Invalid pool "gpu" for the team "admin": use one of local.']);

    await t.admin.ok(t.admin.put("/services/today/ml"));
    await mia.ok(mia.post("/services/instances", { json: { name: "now2", service_name: "today" } }), 201);
    provider.received.length = 0;
    await mia.ok(mia.put("/services/instances/now2/trainer"));
    expect(provider.received[0]!.request).toMatchObject({ appName: "trainer", placement: { poolName: "gpu" } });
    const calls = (await t.admin.get("/provider-calls?app=trainer")).json<Array<{ requestHeaders: Record<string, string>; requestBody: string }>>();
    // The app's pool travels in the bind's fields; X-Tsuru-* headers say where a multi-cluster instance lives.
    expect(calls.at(-1)!.requestBody).toContain("app-pool-name=gpu");
    expect(calls.at(-1)!.requestHeaders["X-Tsuru-Pool-Name"]).toBeUndefined();

    await mia.ok(mia.post("/apps/trainer/pool", { text: "local" }));
    expect((await mia.get("/apps/trainer")).json()).toMatchObject({ Pool: "local" });
    expect((await mia.get("/apps/trainer/log?lines=1")).json<LogEntry[]>()[0]!.Message).toBe("pool changed from gpu to local");
    expect((await mia.post("/apps/trainer/pool", { text: "" })).status).toBe(400);
    expect((await mia.post("/apps/trainer/pool", { text: "nowhere" })).status).toBe(400);
    expect((await mia.post("/apps/nope/pool", { text: "local" })).status).toBe(404);
  });

  it("lists the configured platforms and refuses an app on another one, naming the known ones", async () => {
    expect((await t.admin.get("/platforms")).json()).toEqual([{ Name: "go" }, { Name: "python" }]);
    const answer = await t.admin.post("/apps", { json: { name: "rubyist", platform: "ruby" } });
    expect([answer.status, answer.text]).toEqual([400, 'Invalid platform "ruby": use one of go, python.']);
  });
});

describe("unit addresses", () => {
  it("stay valid addresses however many units deploys have made", () => {
    expect([1, 254, 255, 508, 509].map(unitAddress)).toEqual(["10.10.10.1", "10.10.10.254", "10.10.11.1", "10.10.11.254", "10.10.12.1"]);
  });
});
