/**
 * Users' own accounts through HTTP, on the memory store and on a real Redis: password reset
 * (the token on the platform's terminal), password change, removal, keys, the API key as a
 * credential, and quotas.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, Api, STORES, startTestPlatform, type TestPlatform } from "./helpers.js";

describe.each(STORES)("accounts (%s store)", (kind) => {
  let t: TestPlatform;
  const said: string[] = [];
  beforeAll(async () => {
    t = await startTestPlatform(kind, { say: (line) => said.push(line), config: { defaultQuota: 2 } });
  });
  afterAll(() => t.stop());

  it("resets a password in two steps, the token and the new password shown on the platform's terminal", async () => {
    await t.admin.user("rita@example.com", "first-password");
    expect((await t.anonymous.post("/users/nobody@example.com/password")).status).toBe(200); // as for a user: nothing told
    await t.anonymous.ok(t.anonymous.post("/users/rita@example.com/password"));
    const token = /password\?token=([0-9a-f]+)/.exec(said.at(-1)!)![1]!;
    // The token only works for its user, and only once.
    expect((await t.anonymous.post(`/users/${ADMIN.email}/password?token=${token}`)).status).toBe(403);
    expect((await t.anonymous.post("/users/rita@example.com/password?token=0123abcd")).text).toMatch(/^Invalid or expired reset token/);
    await t.anonymous.ok(t.anonymous.post(`/users/rita@example.com/password?token=${token}`));
    const password = /the new password is (\S+)$/.exec(said.at(-1)!)![1]!;
    expect((await t.anonymous.post(`/users/rita@example.com/password?token=${token}`)).status).toBe(403);
    expect((await t.anonymous.post("/users/rita@example.com/tokens", { json: { password: "first-password" } })).status).toBe(401);
    await t.anonymous.login("rita@example.com", password);
  });

  it("changes a password with the spec's 400 and 403 rules", async () => {
    const sam = await t.admin.user("sam@example.com", "sam-password");
    const change = (json: unknown) => sam.put("/users/password", { json });
    expect((await change({ old: "sam-password" })).status).toBe(400);
    expect((await change({ old: null, new: "new-password" })).text).toBe("Both the old and the new passwords are required.");
    expect((await change({ old: "sam-password", new: "short" })).text).toMatch(/at least 6 characters and at most 50/);
    expect((await change({ old: "sam-password", new: "x".repeat(51) })).status).toBe(400);
    expect((await sam.put("/users/password", { text: "{", headers: { "Content-Type": "application/json" } })).status).toBe(400);
    const wrong = await change({ old: "not-my-password", new: "new-password" });
    expect([wrong.status, wrong.text]).toEqual([403, "The given password didn't match the user's current password."]);
    await sam.ok(change({ old: "sam-password", new: "new-password" }));
    await t.anonymous.login("sam@example.com", "new-password");
    expect((await t.anonymous.put("/users/password", { json: { old: "a", new: "b" } })).status).toBe(401);
  });

  it("removes a user: their tokens stop working, and no team is left without members", async () => {
    const tom = await t.admin.user("tom@example.com");
    await tom.ok(tom.post("/teams", { json: { name: "toms" } }));
    const last = await tom.delete("/users");
    expect([last.status, last.text]).toEqual([403, 'This user is the last member of the team "toms": remove the team or add another member first.']);
    await t.admin.ok(t.admin.put("/teams/toms/admin@example.com"));
    await tom.ok(tom.delete("/users"));
    expect((await tom.get("/users/info")).status).toBe(401);
    expect((await t.admin.get("/teams/toms")).json()).toEqual({ name: "toms", users: [ADMIN.email] });
    expect((await t.anonymous.post("/users/tom@example.com/tokens", { json: { password: "user-password" } })).status).toBe(401);
  });

  it("adds, lists and removes public keys", async () => {
    const uma = await t.admin.user("uma@example.com");
    const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG uma@laptop";
    await uma.ok(uma.post("/users/keys", { json: { key } }));
    expect((await uma.post("/users/keys", { json: { key } })).status).toBe(409);
    expect((await uma.post("/users/keys", { json: { key: " " } })).status).toBe(400);
    expect((await uma.post("/users/keys", { json: {} })).status).toBe(400);
    await uma.ok(uma.post("/users/keys", { json: { key: "ssh-rsa AAAAB3 uma@desk", name: "desk" } }));
    expect((await uma.get("/users/keys")).json()).toEqual({ "key-1": key, desk: "ssh-rsa AAAAB3 uma@desk" });
    await uma.ok(uma.delete("/users/keys", { json: { key } }));
    await uma.ok(uma.delete("/users/keys", { json: { name: "desk" } }));
    expect((await uma.delete("/users/keys", { json: { key } })).status).toBe(404);
    expect((await uma.get("/users/keys")).json()).toEqual({});
  });

  it("shows the API key once, when made, keeps only its hash, and regenerates it: a bearer credential until replaced", async () => {
    const vic = await t.admin.user("vic@example.com");
    const shown = (await vic.ok(vic.get("/users/api-key"))).json<{ token: string; users: string }>();
    expect(shown).toEqual({ token: expect.stringMatching(/^[0-9a-f]{64}$/), users: "vic@example.com" });
    const again = (await vic.get("/users/api-key")).json<{ token: string }>().token;
    expect(again).toMatch(/shown once, when it was made: POST \/users\/api-key makes a new one/);
    expect(JSON.stringify(await t.platform.context.store.all("users"))).not.toContain(shown.token);
    const byKey = new Api(t.url, shown.token);
    expect((await byKey.ok(byKey.get("/users/info"))).json()).toEqual({ Email: "vic@example.com", Teams: [] });
    const fresh = (await vic.ok(vic.post("/users/api-key"))).json<{ token: string }>().token;
    expect((await byKey.get("/users/info")).status).toBe(401);
    expect(fresh).not.toBe(shown.token);
    await new Api(t.url, fresh).ok(new Api(t.url, fresh).get("/users/info"));
  });

  it("counts the apps a user owns against the configured default quota, and answers 403 \"Quota exceeded\" past it", async () => {
    const wes = await t.admin.user("wes@example.com");
    await wes.ok(wes.post("/teams", { json: { name: "wes-team" } }));
    expect((await wes.get("/quota/wes@example.com")).json()).toEqual({ items: 0, available: 2 });
    await wes.ok(wes.post("/apps", { json: { name: "wes-one", platform: "go" } }));
    await wes.ok(wes.post("/apps", { json: { name: "wes-two", platform: "go" } }));
    expect((await wes.get("/quota/wes@example.com")).json()).toEqual({ items: 2, available: 0 });
    const over = await wes.post("/apps", { json: { name: "wes-three", platform: "go" } });
    expect([over.status, over.text]).toEqual([403, "Quota exceeded"]);
    await wes.ok(wes.delete("/apps/wes-two"));
    await wes.ok(wes.post("/apps", { json: { name: "wes-three", platform: "go" } }));
    // Admins see anyone's quota; others only their own; unknown users are 404.
    expect((await t.admin.get("/quota/wes@example.com")).json()).toEqual({ items: 2, available: 0 });
    expect((await wes.get(`/quota/${ADMIN.email}`)).status).toBe(403);
    expect((await t.admin.get("/quota/nobody@example.com")).status).toBe(404);
    expect((await t.admin.get("/quota/not-an-email")).status).toBe(400);
  });
});

describe("an unlimited quota (-1)", () => {
  it("never refuses an app", async () => {
    const t = await startTestPlatform("memory", { config: { defaultQuota: -1 } });
    try {
      for (const name of ["u1", "u2", "u3"]) await t.admin.ok(t.admin.post("/apps", { json: { name, platform: "go" } }));
      expect((await t.admin.get(`/quota/${ADMIN.email}`)).json()).toEqual({ items: 3, available: -1 });
    } finally {
      await t.stop();
    }
  });
});
