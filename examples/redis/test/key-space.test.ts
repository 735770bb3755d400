/**
 * Native and OSB instances of plan `shared` on one Redis server: over names of every shape both
 * protocols accept (a native `osb`, OSB ids holding `.`, `~`, `-`, `_`, ids and names that are
 * prefixes of others), no app reaches another instance's keys or channels, and destroying an
 * instance removes its keys and users and nothing of any other's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_BROKER } from "../broker.js";
import { REGISTRY_KEY_PREFIX } from "../redis-provider.js";
import { appRuns, bindEnv, broker, startSharedSetup, type SharedSetup } from "./support.js";

const { serviceId, planIds } = REDIS_BROKER;

/** Native instance names (a letter, then letters, digits, `-`, `_`): `osb` first of all. */
const NATIVE = ["osb", "osb-x", "osb_x", "OSB", "t1", "t1-x", "t1_x", "ab"];
/**
 * OSB instance ids (letters, digits, `.`, `_`, `~`, `-`): equal to native names, prefixes of each
 * other (`t1` / `t1.x` / `t1.x.y`, `t1` / `t1-x`), ids that look like user-name parts (`t1.app`,
 * `t1.health`), one character, a GUID. Ids made of dots alone are left out: a URL cannot carry
 * them as a path segment (fetch resolves them as `.`/`..`).
 */
const OSB = ["osb", "t1", "t1.x", "t1.x.y", "t1-x", "t1_x", "t1~x", "t1.", "t1.app", "t1.health", "~", "-", "_", "x", ".x", "8f0e2d1c-0000-4000-8000-000000000001"];

interface Tenant {
  label: string;
  env: Record<string, string>;
  destroy(): Promise<number>;
}

describe("instances of both protocols on one shared server", () => {
  let setup: SharedSetup;
  const tenants: Tenant[] = [];

  beforeAll(async () => {
    setup = await startSharedSetup("key-space");
    const osb = broker(setup.provider.url);
    const query = `service_id=${serviceId}&plan_id=${planIds.shared}`;
    for (const name of NATIVE) {
      expect((await setup.api.create(name, "shared")).status).toBe(201);
      tenants.push({ label: `native ${name}`, env: bindEnv(await setup.api.bindApp(name, "web")), destroy: async () => (await setup.api.destroy(name)).status });
    }
    for (const [index, id] of OSB.entries()) {
      const instance = `/v2/service_instances/${id}`;
      const provisioned = await osb("PUT", instance, { service_id: serviceId, plan_id: planIds.shared, organization_guid: "org", space_guid: "space" });
      expect(provisioned.status, `provision ${id}`).toBe(201);
      const bound = await osb("PUT", `${instance}/service_bindings/binding-${index}`, {
        service_id: serviceId,
        plan_id: planIds.shared,
        bind_resource: { app_guid: "web" },
      });
      expect(bound.status, `bind ${id}`).toBe(201);
      tenants.push({
        label: `OSB ${id}`,
        env: bound.body.credentials as Record<string, string>,
        destroy: async () => (await osb("DELETE", `${instance}?${query}`)).status,
      });
    }
  });
  afterAll(async () => {
    await setup?.stop();
  });

  it("names native instances' keys and users as before, and OSB ones under osb@<id>:", () => {
    const env = (label: string) => tenants.find((tenant) => tenant.label === label)!.env;
    expect(env("native osb")).toMatchObject({ REDIS_KEY_PREFIX: "osb:", REDIS_USER: "osb.app.web" });
    expect(env("OSB t1.x")).toMatchObject({ REDIS_KEY_PREFIX: "osb@t1.x:", REDIS_USER: expect.stringMatching(/^osb@t1\.x:app\.h[0-9a-f]{16}$/) });
  });

  it("lets each app reach its own keys and channels and no other instance's, nor the registry's", async () => {
    const outcomes = await Promise.all(
      tenants.map(async (tenant) => {
        const others = tenants.filter((other) => other !== tenant).map((other) => other.env.REDIS_KEY_PREFIX!);
        const commands = [
          ["SET", `${tenant.env.REDIS_KEY_PREFIX}k`, tenant.label],
          ["PUBLISH", `${tenant.env.REDIS_KEY_PREFIX}news`, "hello"],
          ...others.flatMap((prefix) => [
            ["SET", `${prefix}k`, `written by ${tenant.label}`],
            ["GET", `${prefix}k`],
            ["PUBLISH", `${prefix}news`, "hello"],
          ]),
          ["GET", `${REGISTRY_KEY_PREFIX}census`],
        ];
        const replies = await appRuns(tenant.env, commands);
        const [ownSet, ownPublish, ...foreign] = replies;
        return {
          tenant: tenant.label,
          own: [ownSet, ownPublish],
          // Every command on another instance's (or the registry's) name, with what Redis answered when it did not refuse it.
          reached: foreign.flatMap((reply, index) => (reply.startsWith("NOPERM") ? [] : [`${commands[index + 2]!.join(" ")} -> ${reply}`])),
        };
      }),
    );
    expect(outcomes).toEqual(tenants.map((tenant) => ({ tenant: tenant.label, own: ["OK", "0"], reached: [] })));
  });

  it("removes, with an instance, its keys and users and nothing of any other instance's", async () => {
    const tenantKeys = async () => (await setup.admin.keys("*")).filter((key) => !key.startsWith(REGISTRY_KEY_PREFIX)).sort();
    const users = async () => (await setup.admin.aclUsers()).sort();
    const usersAtStart = await users();
    // Each app has written its key; each instance has its app's user and its health user.
    expect(await tenantKeys()).toEqual(tenants.map((tenant) => `${tenant.env.REDIS_KEY_PREFIX}k`).sort());
    for (const [index, tenant] of tenants.entries()) {
      const keysBefore = await tenantKeys();
      const usersBefore = await users();
      expect(await tenant.destroy(), `destroy ${tenant.label}`).toBe(200);
      const keysAfter = await tenantKeys();
      const usersAfter = await users();
      expect({ tenant: tenant.label, removedKeys: keysBefore.filter((key) => !keysAfter.includes(key)) }).toEqual({
        tenant: tenant.label,
        removedKeys: [`${tenant.env.REDIS_KEY_PREFIX}k`],
      });
      const removedUsers = usersBefore.filter((user) => !usersAfter.includes(user));
      expect({ tenant: tenant.label, removedUsers: removedUsers.length, removedItsApp: removedUsers.includes(tenant.env.REDIS_USER!) }).toEqual({
        tenant: tenant.label,
        removedUsers: 2, // its app's and its health user
        removedItsApp: true,
      });
      // The instances left still let their apps in.
      for (const other of tenants.slice(index + 1)) expect(usersAfter).toContain(other.env.REDIS_USER);
    }
    // Each destroy removed two users: had one taken another instance's health user, its own would be left.
    expect(usersAtStart.length - (await users()).length).toBe(2 * tenants.length);
    expect(await users()).not.toContainEqual(expect.stringMatching(/\.health$|:health$/));
    expect(await tenantKeys()).toEqual([]);
  });
});
