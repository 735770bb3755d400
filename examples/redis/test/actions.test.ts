/**
 * The provider's actions over HTTP, as the platform's proxy forwards them: a real provider on a
 * real redis-server, instances of both plans, apps connecting with the env their bind returned.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actionsManifest } from "provider-kit";
import { actions } from "../actions.js";
import type { MemoryUse } from "../plan.js";
import { appClient, bindEnv, eventually, failure, PASSWORD, startSharedSetup, type SharedSetup } from "./support.js";

describe("the Redis provider's actions", () => {
  let setup: SharedSetup;
  const api = () => setup.api;
  const plans = ["shared", "dedicated"] as const;

  beforeAll(async () => {
    setup = await startSharedSetup("actions");
    for (const plan of plans) {
      for (const name of [`${plan}-a`, `${plan}-b`]) expect((await api().create(name, plan)).status).toBe(201);
    }
    await eventually(async () => (await api().status("dedicated-a")).status === 204 && (await api().status("dedicated-b")).status === 204);
  });

  afterAll(() => setup?.stop());

  /** The key an instance's app may write: shared instances have a prefix, dedicated ones do not. */
  const keyOf = (env: Record<string, string>, key: string) => `${env.REDIS_KEY_PREFIX ?? ""}${key}`;

  for (const plan of plans) {
    it(`rotates a bound app's password on a ${plan} instance without breaking it, then retires the old one`, async () => {
      const instance = `${plan}-b`; // -a is flushed and counted below
      const web = bindEnv(await api().bindApp(instance, "web"));
      const worker = bindEnv(await api().bindApp(instance, "worker"));
      const workerClient = await setup.connect(worker);
      const webClient = await setup.connect(web);
      expect(await webClient.ping()).toBe("PONG");

      const answer = await api().action("POST", instance, "/apps/web/rotate-password");
      expect(answer.status).toBe(200);
      const rotated = JSON.parse(answer.text) as Record<string, string>;
      expect(rotated.REDIS_USER).toBe(web.REDIS_USER);
      expect(rotated.REDIS_PASSWORD).not.toBe(web.REDIS_PASSWORD);
      // Both passwords work: the app, its open connection and a new one on its old env, keep going.
      expect(await webClient.ping()).toBe("PONG");
      expect(await (await setup.connect(web)).ping()).toBe("PONG");
      const rotatedClient = await setup.connect(rotated);
      expect(await rotatedClient.set(keyOf(rotated, "rotated"), "1")).toBe("OK");

      // After the caller's grace: the old password is refused, and so is every session still open.
      const retired = await api().action("POST", instance, "/apps/web/retire-old-passwords");
      expect([retired.status, retired.text]).toEqual([200, '{"retiredPasswords":1}']);
      expect(await failure(appClient(web))).toMatch(/WRONGPASS/);
      expect(await failure(webClient.ping())).not.toMatch(/^OK:/);
      expect(await failure(rotatedClient.ping())).not.toMatch(/^OK:/);
      expect(await (await setup.connect(rotated)).get(keyOf(rotated, "rotated"))).toBe("1");
      expect(await workerClient.ping()).toBe("PONG");
      expect(await (await setup.connect(worker)).ping()).toBe("PONG");

      const again = await api().action("POST", instance, "/apps/web/retire-old-passwords");
      expect([again.status, again.text]).toEqual([
        409,
        `App "web" has one password on instance "${instance}": nothing to retire (no rotation since it was last bound).`,
      ]);
      for (const path of ["/apps/nobody/rotate-password", "/apps/nobody/retire-old-passwords"]) {
        const unbound = await api().action("POST", instance, path);
        expect([unbound.status, unbound.text]).toEqual([404, `App "nobody" is not bound to instance "${instance}"; bind it first.`]);
      }
    });

    it(`hands a ${plan} app a new password when it is bound again after a rotation, retiring the others`, async () => {
      const instance = `${plan}-b`;
      const old = bindEnv(await api().bindApp(instance, "rebound"));
      const rotated = JSON.parse((await api().action("POST", instance, "/apps/rebound/rotate-password")).text) as Record<string, string>;
      expect((await api().unbindApp(instance, "rebound")).status).toBe(200);
      const fresh = bindEnv(await api().bindApp(instance, "rebound"));
      expect(await (await setup.connect(fresh)).ping()).toBe("PONG");
      expect(await failure(appClient(old))).toMatch(/WRONGPASS/);
      expect(await failure(appClient(rotated))).toMatch(/WRONGPASS/);
      expect((await api().action("POST", instance, "/apps/rebound/retire-old-passwords")).status).toBe(409);
    });

    it(`flushes only a ${plan} instance's keys`, async () => {
      const [mine, other] = [`${plan}-a`, `${plan}-b`];
      const mineEnv = bindEnv(await api().bindApp(mine, "filler"));
      const otherEnv = bindEnv(await api().bindApp(other, "filler"));
      const [mineClient, otherClient] = [await setup.connect(mineEnv), await setup.connect(otherEnv)];
      for (const key of ["one", "two", "three"]) await mineClient.set(keyOf(mineEnv, `flush:${key}`), "1");
      await otherClient.set(keyOf(otherEnv, "flush:kept"), "1");

      const answer = await api().action("POST", mine, "/flush");
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.text)).toEqual({ removedKeys: 3 });
      expect(await mineClient.exists(["one", "two", "three"].map((key) => keyOf(mineEnv, `flush:${key}`)))).toBe(0);
      expect(await otherClient.get(keyOf(otherEnv, "flush:kept"))).toBe("1");
      // The registry shares this test's server: a shared instance's flush leaves its keys too.
      if (plan === "shared") expect(await setup.admin.keys("_provider-kit:*")).not.toEqual([]);
    });

    it(`reports a ${plan} instance's memory use, which grows as it is written`, async () => {
      const instance = `${plan}-b`;
      const memory = async () => {
        const answer = await api().action("GET", instance, "/memory");
        expect(answer.status).toBe(200);
        return JSON.parse(answer.text) as MemoryUse;
      };
      const before = await memory();
      expect(before).toMatchObject({ plan, complete: true });
      const env = bindEnv(await api().bindApp(instance, "writer"));
      await (await setup.connect(env)).set(keyOf(env, "memory:big"), "x".repeat(200_000));
      const after = await memory();
      expect(after.keys).toBe(before.keys + 1);
      expect(after.usedBytes).toBeGreaterThan((before.usedBytes ?? 0) + 100_000);
    });
  }

  it("answers 404 for an unknown instance, and 401 without the service's credentials", async () => {
    for (const [method, path] of [["POST", "/apps/web/rotate-password"], ["POST", "/apps/web/retire-old-passwords"], ["POST", "/flush"], ["GET", "/memory"]] as const) {
      const unknown = await api().action(method, "nowhere", path);
      expect(unknown.status, `${method} ${path}`).toBe(404);
      expect(unknown.text).toBe('Instance "nowhere" not found.');
      const anonymous = await fetch(`${setup.provider.url}/resources/shared-a${path}`, { method });
      expect(anonymous.status, `${method} ${path}`).toBe(401);
    }
  });

  it("says where it runs to any caller with the service's credentials, under /authenticated-resources", async () => {
    const authorization = `Basic ${Buffer.from(`redis:${PASSWORD}`).toString("base64")}`;
    const answer = await fetch(`${setup.provider.url}/authenticated-resources/where`, { headers: { authorization } });
    expect([answer.status, await answer.json()]).toEqual([200, { cluster: null, plans: ["shared", "dedicated"] }]);
    expect((await fetch(`${setup.provider.url}/authenticated-resources/where`)).status).toBe(401);
  });

  it("describes its actions in the platform's service manifest", () => {
    expect(actionsManifest(actions)).toEqual({
      enabled: true,
      strict_actions: true,
      legacy_compat: false,
      operations: [
        { method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" },
        { method: "POST", path: "/apps/{app}/retire-old-passwords", action: "apps.retire-old-passwords" },
        { method: "POST", path: "/flush", action: "flush" },
        { method: "GET", path: "/memory", action: "memory" },
      ],
    });
  });
});
