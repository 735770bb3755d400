/** The service catalog and service instances through HTTP, against a createProvider provider. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GOOD_AUTH } from "../../../../test/support/fake-provider.js";
import { eventually } from "../../../../test/support/eventually.js";
import { manifest, STORES, startProgressProvider, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";

describe.each(STORES)("services and instances (%s store)", (kind) => {
  let t: TestPlatform;
  let provider: TestProvider;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    provider = await startTestProvider();
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("registers a service from YAML with the spec's errors", async () => {
    const post = (text: string) => t.admin.post("/services", { text });
    await t.admin.ok(post(manifest("kv", provider.running.url)));
    const duplicate = await post(manifest("kv", provider.running.url));
    expect([duplicate.status, duplicate.text]).toEqual([500, 'Service "kv" already exists.']);
    const invalid = await post("id: [unclosed\n");
    expect(invalid.status).toBe(500);
    expect(invalid.text).toMatch(/^Invalid YAML: /);
    expect((await post("password: x\nendpoint: {production: http://a}\n")).text).toBe("You must provide a(n) id in the manifest file.");
    expect((await post("id: x1\nendpoint: {production: http://a}\n")).text).toBe("You must provide a(n) password in the manifest file.");
    expect((await post("id: x1\npassword: p\n")).text).toBe("You must provide a(n) endpoint in the manifest file.");
    expect((await post(manifest("Bad_Id", "http://a"))).status).toBe(400);
    expect((await post(manifest("x2", "http://a", { variant: "C" }))).text).toMatch(/Invalid variant "C"/);
    expect((await post(manifest("x3", "http://a", { encoding: "xml" }))).text).toMatch(/Invalid encoding "xml"/);
    expect((await post("- a list\n")).status).toBe(400);

    const loner = await t.admin.user("loner@example.com");
    const teamless = await loner.post("/services", { text: manifest("lonely", "http://a") });
    expect(teamless.status).toBe(403);

    expect((await t.admin.get("/services")).json()).toEqual([{ service: "kv", instances: [] }]);
    expect((await t.admin.get("/services/nope")).status).toBe(404);
  });

  it("updates a registered service, keeps its doc, and shares it with teams", async () => {
    await t.admin.ok(t.admin.put("/services", { text: manifest("kv", provider.running.url, { variant: "current" }) }));
    expect((await t.admin.put("/services", { text: manifest("nope", "http://a") })).status).toBe(404);
    await t.admin.ok(t.admin.put("/services/kv/doc", { text: "Key-value store. Bind it and read KV_URL." }));
    expect((await t.admin.get("/services/kv/doc")).text).toBe("Key-value store. Bind it and read KV_URL.");
    expect((await t.admin.get("/services/nope/doc")).status).toBe(404);

    const erin = await t.admin.user("erin@example.com");
    await erin.ok(erin.post("/teams", { json: { name: "erins" } }));
    expect((await erin.get("/services")).json()).toEqual([]);
    expect((await erin.put("/services", { text: manifest("kv", "http://elsewhere") })).status).toBe(403);
    await t.admin.ok(t.admin.put("/services/kv/erins"));
    expect((await t.admin.put("/services/kv/erins")).status).toBe(409);
    expect((await t.admin.put("/services/kv/no-team")).status).toBe(404);
    expect((await erin.get("/services")).json()).toEqual([{ service: "kv", instances: [] }]);
    await t.admin.ok(t.admin.delete("/services/kv/erins"));
    const orphan = await t.admin.delete("/services/kv/admin");
    expect([orphan.status, orphan.text]).toEqual([403, expect.stringMatching(/a service can not be orphaned/)]);
    expect((await erin.delete("/services/kv")).status).toBe(403);
  });

  it("creates an instance on the provider first, and words the provider's failure as the platform does", async () => {
    const create = (json: unknown) => t.admin.post("/services/instances", { json });
    await t.admin.ok(create({ name: "store1", service_name: "kv", plan: "small" }), 201);
    expect(provider.received.at(-1)).toMatchObject({ handler: "create", request: { instance: "store1", plan: "small", team: "admin" } });
    expect((await create({ name: "store1", service_name: "kv" })).status).toBe(409);
    expect((await create({ name: "store2", service_name: "nope" })).status).toBe(404);
    expect((await create({ name: "2bad", service_name: "kv" })).status).toBe(400);
    expect((await create({ name: "store2" })).status).toBe(400);

    // The provider already has an instance of that name (made behind the platform's back): its 409, its words.
    await provider.running.http.post("/resources").set("Authorization", GOOD_AUTH).type("form").send("name=ghost").expect(201);
    const clash = await create({ name: "ghost", service_name: "kv" });
    expect([clash.status, clash.text]).toEqual([409, "Failed to create the instance ghost: invalid response: An instance with this name already exists. (code: 409)"]);
    expect((await t.admin.get("/services/instances/ghost")).status).toBe(404);

    expect((await t.admin.get("/services/instances")).json()).toEqual([{ service: "kv", instances: ["store1"] }]);
    expect((await t.admin.get("/services/instances/store1/status")).text).toBe('Service instance "store1" is up');
    expect((await t.admin.get("/services/instances/nope")).status).toBe(404);
  });

  it("shows the provider's info of an instance, and of each instance of a service listing, one call each", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "store2", service_name: "kv", plan: "large" } }), 201);
    provider.received.length = 0;
    expect((await t.admin.get("/services/instances/store1")).json()).toEqual({
      name: "store1",
      servicename: "kv",
      teams: ["admin"],
      apps: [],
      planname: "small",
      teamowner: "admin",
      info: { Plan: "small" },
    });
    expect(provider.received.map((call) => [call.handler, (call.request as { instance: string }).instance])).toEqual([["info", "store1"]]);
    provider.received.length = 0;
    const listed = (await t.admin.get("/services/kv")).json<Array<{ Name: string }>>();
    expect(listed.sort((a, b) => a.Name.localeCompare(b.Name))).toEqual([
      { Name: "store1", Teams: ["admin"], Apps: [], ServiceName: "kv", Info: { Plan: "small" } },
      { Name: "store2", Teams: ["admin"], Apps: [], ServiceName: "kv", Info: { Plan: "large" } },
    ]);
    expect(provider.handlers()).toEqual(["info", "info"]);
    await t.admin.ok(t.admin.delete("/services/instances/store2"));
  });

  it("grants and revokes a team's access to an instance", async () => {
    const frank = await t.admin.user("frank@example.com");
    await frank.ok(frank.post("/teams", { json: { name: "franks" } }));
    expect((await frank.get("/services/instances/store1")).status).toBe(403);
    await t.admin.ok(t.admin.put("/services/instances/permission/store1/franks"));
    expect((await t.admin.put("/services/instances/permission/store1/franks")).status).toBe(409);
    expect((await t.admin.put("/services/instances/permission/nope/franks")).status).toBe(404);
    expect((await frank.get("/services/instances/store1")).json()).toMatchObject({ teams: ["admin", "franks"] });
    await t.admin.ok(t.admin.delete("/services/instances/permission/store1/franks"));
    expect((await frank.get("/services/instances/store1")).status).toBe(403);
  });

  it("refuses to remove a service that has instances, then removes it (204)", async () => {
    const refused = await t.admin.delete("/services/kv");
    expect([refused.status, refused.text]).toEqual([403, "This service cannot be removed because it has instances."]);
    await t.admin.ok(t.admin.delete("/services/instances/store1"));
    expect(provider.received.at(-1)).toMatchObject({ handler: "destroy", request: { instance: "store1" } });
    expect((await t.admin.delete("/services/instances/store1")).status).toBe(404);
    await t.admin.ok(t.admin.delete("/services/kv"), 204);
    expect((await t.admin.delete("/services/kv")).status).toBe(404);
  });
});

describe("an instance whose provider reports the progress of its create", () => {
  it("shows the latest message next to pending in the status and the instance's info, then up", async () => {
    const t = await startTestPlatform("memory");
    const provider = await startProgressProvider("restoring snapshot, 40%");
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("slow", provider.url) }));
      await t.admin.ok(t.admin.post("/services/instances", { json: { name: "snap", service_name: "slow" } }), 201);
      await provider.reported;
      expect((await t.admin.get("/services/instances/snap/status")).text).toBe('Service instance "snap" is pending (restoring snapshot, 40%)');
      await t.admin.ok(t.admin.get("/healers/instance-status"));
      expect((await t.admin.get("/services/instances/snap")).json()).toMatchObject({ status: 'Service instance "snap" is pending (restoring snapshot, 40%)' });
      provider.finish();
      await eventually(async () => ((await t.admin.get("/services/instances/snap/status")).text === 'Service instance "snap" is up' ? true : undefined));
    } finally {
      await t.stop();
      await provider.stop();
    }
  });
});
