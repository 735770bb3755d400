/** Users, tokens and teams through HTTP, on the memory store and on a real Redis. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, Api, STORES, startTestPlatform, type TestPlatform } from "./helpers.js";

describe.each(STORES)("users and teams (%s store)", (kind) => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform(kind, { openSignup: true });
  });
  afterAll(() => t.stop());

  it("answers 401 with the platform's challenge without a valid token", async () => {
    for (const api of [t.anonymous, new Api(t.url, "not-a-token")]) {
      const answer = await api.get("/apps");
      expect(answer.status).toBe(401);
      expect(answer.headers.get("www-authenticate")).toBe('Bearer realm="tsuru" scope="tsuru"');
      expect(answer.text).toBe("You must provide a valid Authorization header");
      expect(answer.headers.get("content-type")).toMatch(/^text\/plain/);
    }
  });

  it("signs up, logs in, tells who is logged in, and logs out", async () => {
    await t.anonymous.ok(t.anonymous.post("/users", { json: { email: "ana@example.com", password: "secret-1" } }));
    const ana = await t.anonymous.login("ana@example.com", "secret-1");
    expect((await ana.ok(ana.get("/users/info"))).json()).toEqual({ Email: "ana@example.com", Teams: [] });
    // A bare token (no "bearer") works too: the platform takes the header's last word.
    const bare = await fetch(`${t.url}/users/info`, { headers: { Authorization: ana.token! } });
    expect(bare.status).toBe(200);
    await ana.ok(ana.delete("/users/tokens"));
    expect((await ana.get("/users/info")).status).toBe(401);
  });

  it("refuses bad sign-ups and logins with the spec's codes", async () => {
    const signUp = (json: unknown) => t.anonymous.post("/users", { json });
    expect((await signUp({ email: "not-an-email", password: "secret-1" })).status).toBe(400);
    expect((await signUp({ email: "bob@example.com", password: "short" })).text).toMatch(/at least 6 characters and at most 50/);
    expect((await signUp({ email: "bob@example.com", password: "x".repeat(51) })).status).toBe(400);
    expect((await signUp({ email: ADMIN.email, password: "secret-1" })).status).toBe(409);
    expect((await signUp({ email: 42 })).status).toBe(400);
    const malformed = await t.anonymous.post("/users", { text: "{nope", headers: { "Content-Type": "application/json" } });
    expect(malformed.status).toBe(400);
    expect(malformed.text).toBe("The request body is not valid JSON.");

    const login = (email: string, json: unknown) => t.anonymous.post(`/users/${email}/tokens`, { json });
    expect((await login("nobody@example.com", { password: "secret-1" })).status).toBe(401);
    expect((await login(ADMIN.email, { password: "" })).status).toBe(400);
    expect((await login(ADMIN.email, { password: null })).status).toBe(400);
    expect((await login(ADMIN.email, { password: "wrong-password" })).status).toBe(401);
    expect((await login(ADMIN.email, { password: ADMIN.password })).json()).toEqual({ token: expect.stringMatching(/^[0-9a-f]{64}$/), is_admin: true });
  });

  it("manages teams with the platform's rules", async () => {
    const carla = await t.admin.user("carla@example.com");
    const dan = await t.admin.user("dan@example.com");
    await carla.ok(carla.post("/teams", { json: { name: "web" } }));
    expect((await carla.post("/teams", { json: { name: "web" } })).status).toBe(409);
    expect((await carla.post("/teams", { json: { name: "1bad name" } })).text).toMatch(/Invalid team name/);
    expect((await carla.get("/teams")).json()).toEqual([{ name: "web" }]);
    expect((await carla.get("/teams/web")).json()).toEqual({ name: "web", users: ["carla@example.com"] });
    expect((await dan.get("/teams/web")).status).toBe(403);
    expect((await carla.get("/teams/nope")).status).toBe(404);

    expect((await dan.put("/teams/web/dan@example.com")).status).toBe(403);
    expect((await carla.put("/teams/web/ghost@example.com")).status).toBe(404);
    await carla.ok(carla.put("/teams/web/dan@example.com"));
    expect((await carla.put("/teams/web/dan@example.com")).status).toBe(409);
    await dan.ok(dan.delete("/teams/web/carla@example.com"));
    const orphan = await dan.delete("/teams/web/dan@example.com");
    expect(orphan.status).toBe(403);
    expect(orphan.text).toMatch(/a team can not be orphaned/);

    await dan.ok(dan.post("/apps", { json: { name: "dans-app", platform: "python" } }));
    const owning = await dan.delete("/teams/web");
    expect(owning.status).toBe(403);
    expect(owning.text).toMatch(/owns app dans-app/);
    await dan.ok(dan.delete("/apps/dans-app"));
    await dan.ok(dan.delete("/teams/web"));
    expect((await dan.get("/teams")).json()).toEqual([]);
  });

  it("serves the health check, the version, and 404 on unknown routes", async () => {
    const health = await t.anonymous.get("/healthcheck/");
    expect([health.status, health.text]).toEqual([200, "WORKING"]);
    expect((await t.anonymous.get("/info")).json()).toEqual({ version: "0.0.0-test" });
    const unknown = await t.admin.get("/no/such/route");
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe("The platform has no route for GET /no/such/route.");
  });

  it("answers 413 to a body over the limit and 400 to names that break the rules", async () => {
    const huge = await t.admin.post("/teams", { json: { name: "x".repeat(2 << 20) } });
    expect(huge.status).toBe(413);
    const badName = await t.admin.get("/apps/Bad_Name");
    expect([badName.status, badName.text]).toEqual([400, 'Invalid app name "Bad_Name".']);
    expect((await t.admin.get("/teams/%ZZ")).status).toBe(400);
  });
});
