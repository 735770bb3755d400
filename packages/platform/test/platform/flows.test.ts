/**
 * The platform's call order and undo steps when providers fail, answer garbage or are down,
 * and whole lives of a Variant B and a `current` provider (each a createProvider provider).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError, NotReadyError, ProviderError } from "provider-kit";
import { createApp } from "../../src/platform/domain/apps.js";
import { bind, unbind } from "../../src/platform/domain/binding.js";
import { createContext } from "../../src/platform/domain/context.js";
import { createInstance } from "../../src/platform/domain/instances.js";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { createService } from "../../src/platform/domain/services.js";
import { createUser } from "../../src/platform/domain/users.js";
import { MemoryPlatformStore } from "../../src/platform/store/memory.js";
import type { Records } from "../../src/platform/store/store.js";
import { freePort } from "../../src/redis/server.js";
import { manifest, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";

let t: TestPlatform;
const providers: TestProvider[] = [];
let app = 0;

beforeAll(async () => {
  t = await startTestPlatform("memory");
});
afterAll(() => t.stop());
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.stop()));
});

/** A provider registered as service `id`, an instance of it and a fresh app with `units` units. */
async function setUp(id: string, provider: TestProvider, extra: Record<string, unknown> = {}, units = 1) {
  providers.push(provider);
  await t.admin.ok(t.admin.post("/services", { text: manifest(id, provider.running.url, extra) }));
  await t.admin.ok(t.admin.post("/services/instances", { json: { name: `${id}-i`, service_name: id } }), 201);
  const name = `app-${++app}`;
  await t.admin.ok(t.admin.post("/apps", { json: { name, platform: "node" } }));
  if (units > 1) await t.admin.ok(t.admin.put(`/apps/${name}/units`, { text: String(units - 1) }));
  provider.received.length = 0;
  return { instance: `${id}-i`, app: name };
}

async function servicesSeenBy(app: string): Promise<unknown> {
  const answer = await t.admin.ok(t.admin.post(`/apps/${app}/run?once=true`, { text: 'printf %s "$TSURU_SERVICES"' }));
  return JSON.parse(answer.text);
}

/** `[undo ]METHOD path status` of each call the platform made to the service's provider, in order. */
async function callsTo(service: string): Promise<string[]> {
  const calls = (await t.admin.get(`/provider-calls?service=${service}`)).json<ProviderCall[]>();
  return calls.map((call) => `${call.undo ? "undo " : ""}${call.method} ${call.path} ${call.status ?? call.error}`);
}

async function instanceApps(instance: string): Promise<string[]> {
  return (await t.admin.get(`/services/instances/${instance}`)).json<{ apps: string[] }>().apps;
}

describe("bind failures leave nothing half-bound", () => {
  it("a failing bind-app: the platform undoes step 1, the app has no variables, the provider's words reach the user", async () => {
    const provider = await startTestProvider({
      bindApp: async () => {
        throw new ProviderError("No more credentials on this plan.", 500);
      },
    });
    const { instance, app } = await setUp("failbind", provider);
    const answer = await t.admin.put(`/services/instances/${instance}/${app}`);
    expect([answer.status, answer.text]).toEqual([500, `Failed to bind the instance "failbind/${instance}" to the app "${app}": invalid response: No more credentials on this plan. (code: 500) ("${instance}" is up)`]);
    // bindServiceInstance asks the provider for the instance's status to word the failure.
    expect((await callsTo("failbind")).slice(1)).toEqual([`POST /resources/${instance}/bind-app 500`, `GET /resources/${instance}/status 204`]);
    expect(await instanceApps(instance)).toEqual([]);
    expect(await servicesSeenBy(app)).toEqual({});
    // Nothing is left to undo: binding again reaches the provider again (step 1 was really undone).
    expect((await t.admin.put(`/services/instances/${instance}/${app}`)).status).toBe(500);
  });

  it("a failing unit bind: the bound units are unbound, then bind-app, then the variables leave", async () => {
    let seen = 0;
    const provider = await startTestProvider({
      bindUnit: async () => {
        if (++seen === 2) throw new ProviderError("unit bind refused", 500);
        return undefined;
      },
    });
    const { instance, app } = await setUp("failunit", provider, {}, 2);
    const answer = await t.admin.put(`/services/instances/${instance}/${app}`);
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(new RegExp(`^Failed to bind the instance "failunit/${instance}" to the unit "10\\.10\\.10\\.\\d+": invalid response: unit bind refused \\(code: 500\\) \\("${instance}" is up\\)$`));
    expect((await callsTo("failunit")).slice(1)).toEqual([
      `POST /resources/${instance}/bind-app 201`,
      `POST /resources/${instance}/bind 201`,
      `POST /resources/${instance}/bind 500`,
      `undo DELETE /resources/${instance}/bind 200`,
      `undo DELETE /resources/${instance}/bind-app 200`,
      `GET /resources/${instance}/status 204`,
    ]);
    expect(await instanceApps(instance)).toEqual([]);
    expect(await servicesSeenBy(app)).toEqual({});
  });

  it("an instance not ready: 412 in the platform's words", async () => {
    const provider = await startTestProvider({
      bindApp: async () => {
        throw new NotReadyError();
      },
    });
    const { instance, app } = await setUp("notready", provider);
    const answer = await t.admin.put(`/services/instances/${instance}/${app}`);
    expect([answer.status, answer.text]).toEqual([412, `You cannot bind any app to this service instance because it is not ready yet. ("${instance}" is up)`]);
    expect(await instanceApps(instance)).toEqual([]);
  });
});

describe("unbind and remove", () => {
  /** What the Redis example answers while an instance's Redis server is away. */
  const AWAY = "The instance's Redis server does not answer right now; try again in a moment.";
  const unitAddresses = async (app: string) => (await t.admin.get(`/apps/${app}`)).json<{ Units: Array<{ Ip: string }> }>().Units.map((unit) => unit.Ip);
  /** The bind-units healer's lines about `app`: none when the platform's records match what the provider was told. */
  const healerLines = async (app: string) => (await t.admin.ok(t.admin.get("/healers/bind-units"))).text.split("\n").filter((line) => line.startsWith(`${app}: `));

  it("bind-app unbind failing after the unit unbinds: the units are bound again, and the records, variables and healer agree", async () => {
    let away = false;
    const provider = await startTestProvider({
      unbindApp: async () => {
        if (away) throw new ProviderError(AWAY, 503);
      },
    });
    const { instance, app } = await setUp("rollback", provider, {}, 2);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    const bound = (await callsTo("rollback")).length;
    away = true;
    const answer = await t.admin.delete(`/services/instances/${instance}/${app}`);
    expect(answer.status).toBe(500);
    expect(answer.text).toContain(AWAY);
    expect((await callsTo("rollback")).slice(bound)).toEqual([
      `DELETE /resources/${instance}/bind 200`,
      `DELETE /resources/${instance}/bind 200`,
      `DELETE /resources/${instance}/bind-app 503`,
      `undo POST /resources/${instance}/bind 201`,
      `undo POST /resources/${instance}/bind 201`,
    ]);
    const rebound = (await t.admin.get(`/provider-calls?service=rollback`)).json<ProviderCall[]>().filter((call) => call.undo);
    expect(rebound.map((call) => /unit-host=([\d.]+)/.exec(call.requestBody)?.[1])).toEqual(await unitAddresses(app));
    expect(await instanceApps(instance)).toEqual([app]);
    expect(Object.keys(await servicesSeenBy(app) as object)).toEqual(["rollback"]);
    expect(await healerLines(app)).toEqual([]);
    away = false;
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}`));
    expect(await instanceApps(instance)).toEqual([]);
  });

  it("a unit unbind failing midway: the unit already unbound is bound again and bind-app is left alone", async () => {
    let refused: string | undefined = undefined;
    const provider = await startTestProvider({
      unbindUnit: async (request) => {
        if (request.unitHost === refused) throw new ProviderError(AWAY, 503);
      },
    });
    const { instance, app } = await setUp("midway", provider, {}, 2);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    const bound = (await callsTo("midway")).length;
    const [first, second] = await unitAddresses(app);
    refused = second;
    const answer = await t.admin.delete(`/services/instances/${instance}/${app}`);
    expect([answer.status, answer.text]).toEqual([500, expect.stringContaining(AWAY)]);
    const calls = (await t.admin.get(`/provider-calls?service=midway`)).json<ProviderCall[]>().slice(bound);
    expect(calls.map((call) => `${call.undo ? "undo " : ""}${call.method} ${call.path} ${call.status} ${/unit-host=([\d.]+)/.exec(call.requestBody)?.[1]}`)).toEqual([
      `DELETE /resources/${instance}/bind 200 ${first}`,
      `DELETE /resources/${instance}/bind 503 ${second}`,
      `undo POST /resources/${instance}/bind 201 ${first}`,
    ]);
    expect(await instanceApps(instance)).toEqual([app]);
    expect(await healerLines(app)).toEqual([]);
  });

  it("a unit the provider will not bind again is recorded as unbound, and the bind-units healer binds it later", async () => {
    let away = false;
    const provider = await startTestProvider({
      unbindApp: async () => {
        if (away) throw new ProviderError(AWAY, 503);
      },
      bindUnit: async () => {
        if (away) throw new ProviderError(AWAY, 503);
        return undefined;
      },
    });
    const { instance, app } = await setUp("norebind", provider);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    away = true;
    expect((await t.admin.delete(`/services/instances/${instance}/${app}`)).status).toBe(500);
    expect((await callsTo("norebind")).at(-1)).toBe(`undo POST /resources/${instance}/bind 503`);
    const [unit] = await unitAddresses(app);
    const log = (await t.admin.get(`/apps/${app}/log?lines=5`)).json<Array<{ Message: string }>>().map((entry) => entry.Message);
    expect(log).toContain(`the unit(s) at ${unit} could not be bound to the instance ${instance} again: GET /healers/bind-units sends their binds again`);
    away = false;
    expect(await healerLines(app)).toEqual([`${app}: bound the unit ${app}-${unit!.split(".").at(-1)} (${unit}) to the instance ${instance}`]);
    expect(await healerLines(app)).toEqual([]);
  });

  it("a provider 404 on unbind means already gone: the unbind succeeds; a 404 on remove is an error", async () => {
    const provider = await startTestProvider({
      unbindApp: async () => {
        throw new NotFoundError("No such binding.");
      },
      destroy: async () => {
        throw new NotFoundError("No such instance.");
      },
    });
    const { instance, app } = await setUp("forgetful", provider);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}`));
    expect(await instanceApps(instance)).toEqual([]);
    expect(await servicesSeenBy(app)).toEqual({});
    const removed = await t.admin.delete(`/services/instances/${instance}`);
    expect([removed.status, removed.text]).toEqual([500, "instance does not exist in the service API (if the provider no longer has it, remove it with ?ignoreerrors=true)"]);
    expect((await t.admin.get(`/services/instances/${instance}`)).status).toBe(200);
  });
});

describe("a provider that lost its instance: the escape hatches", () => {
  /** What a provider answers once it has restarted without the instance's data it needs to unbind. */
  const LOST = "No Redis user for this binding: the instance's data is gone.";
  /** Like the Redis example after a restart that lost the instance: every unbind fails, and the instance is unknown. */
  async function forgetfulProvider() {
    let forgotten = false;
    const provider = await startTestProvider({
      unbindApp: async () => {
        if (forgotten) throw new ProviderError(LOST, 500);
      },
      unbindUnit: async () => {
        if (forgotten) throw new ProviderError(LOST, 500);
      },
      destroy: async (request) => {
        if (forgotten) throw new NotFoundError(`Instance "${request.instance}" not found.`);
      },
    });
    return { provider, forget: () => (forgotten = true) };
  }
  const forcedCalls = async (service: string) =>
    (await t.admin.get(`/provider-calls?service=${service}`)).json<ProviderCall[]>().filter((call) => call.forced).map((call) => `${call.method} ${call.path} ${call.status}`);

  it("unbind, then removal: refused with the way out named, then ?force=true and ?ignoreerrors=true let go, logged and marked in the timeline", async () => {
    const { provider, forget } = await forgetfulProvider();
    const { instance, app } = await setUp("lost", provider, {}, 2);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    forget();

    const unbind = await t.admin.delete(`/services/instances/${instance}/${app}`);
    expect(unbind.status).toBe(500);
    expect(unbind.text).toMatch(new RegExp(`${LOST} \\(code: 500\\) \\(if the provider can no longer undo this binding, unbind with \\?force=true\\)$`));
    const bound = await t.admin.delete(`/services/instances/${instance}`);
    expect([bound.status, bound.text]).toEqual([400, `This service instance is bound to at least one app. Unbind them before removing it, or remove it with ?unbindall=true (bound: ${app}).`]);
    // unbindall unbinds as an unbind does, not forced (as the platform): the same failure.
    expect((await t.admin.delete(`/services/instances/${instance}?unbindall=true`)).text).toBe(unbind.text);
    expect(await instanceApps(instance)).toEqual([app]);
    // Not one of Go's true forms: not forced, and no error of its own.
    expect((await t.admin.delete(`/services/instances/${instance}/${app}?force=yes`)).text).toBe(unbind.text);

    await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}?force=true`));
    expect(await instanceApps(instance)).toEqual([]);
    expect(await servicesSeenBy(app)).toEqual({});
    expect(await forcedCalls("lost")).toEqual([
      `DELETE /resources/${instance}/bind 500`,
      `DELETE /resources/${instance}/bind 500`,
      `DELETE /resources/${instance}/bind-app 500`,
    ]);
    const log = (await t.admin.get(`/apps/${app}/log?lines=10&source=tsuru`)).json<Array<{ Message: string }>>().map((entry) => entry.Message);
    expect(log.filter((message) => /^(\[unbind-app-endpoint\] )?ignored error due to force: /.test(message))).toHaveLength(3);
    expect(log).toContain(`[unbind-app-endpoint] ignored error due to force: Failed to unbind ("/resources/${instance}/bind-app"): invalid response: ${LOST} (code: 500)`);
    expect(log.at(-1)).toBe(`unbound from the instance ${instance} (forced); restarting app`);

    const removed = await t.admin.delete(`/services/instances/${instance}`);
    expect([removed.status, removed.text]).toEqual([500, "instance does not exist in the service API (if the provider no longer has it, remove it with ?ignoreerrors=true)"]);
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}?ignoreerrors=true`));
    expect((await t.admin.get(`/services/instances/${instance}`)).status).toBe(404);
    expect((await forcedCalls("lost")).at(-1)).toBe(`DELETE /resources/${instance} 404`);
  });

  it("app removal unbinds with force: the app goes, and the instance lets go of it", async () => {
    const { provider, forget } = await forgetfulProvider();
    const { instance, app } = await setUp("gone", provider);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    forget();
    await t.admin.ok(t.admin.delete(`/apps/${app}`));
    expect((await t.admin.get(`/apps/${app}`)).status).toBe(404);
    expect(await instanceApps(instance)).toEqual([]);
    expect(await forcedCalls("gone")).toEqual([`DELETE /resources/${instance}/bind 500`, `DELETE /resources/${instance}/bind-app 500`]);
  });

  it("unbindall unbinds every app, then removes the instance", async () => {
    const provider = await startTestProvider();
    const { instance, app } = await setUp("every", provider);
    const other = `${app}-b`;
    await t.admin.ok(t.admin.post("/apps", { json: { name: other, platform: "node" } }));
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${other}`));
    provider.received.length = 0;
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}?unbindall=true`));
    expect(provider.handlers()).toEqual(["unbindUnit", "unbindApp", "unbindUnit", "unbindApp", "destroy"]);
    expect((await t.admin.get(`/services/instances/${instance}`)).status).toBe(404);
    expect(await servicesSeenBy(other)).toEqual({});
  });

  it("forcing takes the same rights as unbinding: a user without access to the app gets 403 and nothing is sent", async () => {
    const { provider, forget } = await forgetfulProvider();
    const { instance, app } = await setUp("guarded", provider);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    forget();
    const outsider = await t.admin.user(`outsider-${app}@example.com`);
    await outsider.ok(outsider.post("/teams", { json: { name: `team-${app}` } }));
    await t.admin.ok(t.admin.put(`/services/instances/permission/${instance}/team-${app}`));
    const calls = (await callsTo("guarded")).length;
    expect((await outsider.delete(`/services/instances/${instance}/${app}?force=true`)).status).toBe(403);
    expect((await outsider.delete(`/services/instances/${instance}?unbindall=true&ignoreerrors=true`)).status).toBe(403);
    expect((await outsider.delete(`/apps/${app}`)).status).toBe(403);
    expect(await callsTo("guarded")).toHaveLength(calls);
    expect(await instanceApps(instance)).toEqual([app]);
  });
});

describe("providers that answer garbage or are down", () => {
  let garbage: Server;
  const garbageCalls: string[] = [];
  beforeAll(async () => {
    // Serves bind-app with 404 for the instance `legacy`, as providers older than bind-app did.
    garbage = createServer((req, res) => {
      garbageCalls.push(`${req.method} ${req.url}`);
      req.resume();
      if (req.url === "/resources/legacy/bind-app") return res.writeHead(404).end("not found");
      if (req.url === "/resources/legacy/bind") return res.writeHead(201, { "Content-Type": "application/json" }).end('{"LEGACY_URL":"legacy://x"}');
      res.writeHead(200, { "Content-Type": "text/html" }).end("<html>it works</html>");
    });
    await new Promise<void>((resolve) => garbage.listen(0, "127.0.0.1", resolve));
  });
  afterAll(() => new Promise<void>((resolve) => garbage.close(() => resolve())));

  it("a bind answer that is not a JSON object fails the bind; that failed step is not undone at the provider", async () => {
    const url = `http://127.0.0.1:${(garbage.address() as AddressInfo).port}`;
    await t.admin.ok(t.admin.post("/services", { text: manifest("garbage", url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "junk", service_name: "garbage" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "victim", platform: "node" } }));
    garbageCalls.length = 0;
    const answer = await t.admin.put("/services/instances/junk/victim");
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/^Failed to bind the instance "garbage\/junk" to the app "victim": its answer cannot be used \(the body is not JSON/);
    // bindAppEndpointAction failed, so its backward (the unbind) is not run; then the status for the message.
    expect(garbageCalls).toEqual(["POST /resources/junk/bind-app", "GET /resources/junk/status"]);
    expect(await instanceApps("junk")).toEqual([]);
    expect(await servicesSeenBy("victim")).toEqual({});
  });

  it("bind-app answered 404: the platform tries POST /bind once, with the app's fields", async () => {
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "legacy", service_name: "garbage" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "old-app", platform: "node" } }));
    garbageCalls.length = 0;
    const answer = await t.admin.ok(t.admin.put("/services/instances/legacy/old-app"));
    expect(answer.json()).toEqual({ LEGACY_URL: "*** (private variable)" });
    // The fallback, then (Variant A) the one unit's bind.
    expect(garbageCalls).toEqual(["POST /resources/legacy/bind-app", "POST /resources/legacy/bind", "POST /resources/legacy/bind"]);
    const fallback = (await t.admin.get("/provider-calls?instance=legacy")).json<ProviderCall[]>().find((call) => call.path === "/resources/legacy/bind")!;
    expect(fallback.requestBody).toContain("app-name=old-app");
  });

  /**
   * Runs `work` on a platform that gives up provider calls after GIVE_UP_MS, with a provider that
   * creates at once and never answers anything else. The creates must answer within that limit on
   * a loaded machine too: 2 s, not less.
   */
  const GIVE_UP_MS = 2_000;
  async function withSilentProvider(work: (quick: TestPlatform, url: string) => Promise<void>): Promise<void> {
    const silent = createServer((req, res) => {
      req.resume();
      if (req.method === "POST" && req.url === "/resources") res.writeHead(201).end();
    });
    silent.listen(0, "127.0.0.1");
    await new Promise((resolve) => silent.once("listening", resolve));
    const quick = await startTestPlatform("memory", { providerCalls: { timeoutMs: GIVE_UP_MS } });
    try {
      await work(quick, `http://127.0.0.1:${(silent.address() as AddressInfo).port}`);
    } finally {
      await quick.stop();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  }

  it("a provider too slow to answer: the call is given up at the limit, with a clear error, and nothing is bound", async () => {
    await withSilentProvider(async (quick, url) => {
      await quick.admin.ok(quick.admin.post("/services", { text: manifest("slow", url) }));
      await quick.admin.ok(quick.admin.post("/services/instances", { json: { name: "late", service_name: "slow" } }), 201);
      await quick.admin.ok(quick.admin.post("/apps", { json: { name: "waiting", platform: "node" } }));
      const bound = await quick.admin.put("/services/instances/late/waiting");
      const silent = `the provider did not answer (no answer within ${GIVE_UP_MS / 1000} s)`;
      expect([bound.status, bound.text]).toEqual([
        500,
        `Failed to bind the instance "slow/late" to the app "waiting": ${silent} (failed to retrieve instance status: Failed to get status of instance late: ${silent})`,
      ]);
      expect((await quick.admin.get("/services/instances/late")).json()).toMatchObject({ apps: [] });
    });
  });

  it("info from a provider that answers garbage or never answers: no info, and the listings still answer", async () => {
    await withSilentProvider(async (quick, url) => {
      await quick.admin.ok(quick.admin.post("/services", { text: manifest("silent", url) }));
      await quick.admin.ok(quick.admin.post("/services", { text: manifest("garbage", `http://127.0.0.1:${(garbage.address() as AddressInfo).port}`) }));
      await quick.admin.ok(quick.admin.post("/services/instances", { json: { name: "mute", service_name: "silent" } }), 201);
      await quick.admin.ok(quick.admin.post("/services/instances", { json: { name: "junk", service_name: "garbage" } }), 201);
      expect((await quick.admin.ok(quick.admin.get("/services/silent"))).json()).toEqual([{ Name: "mute", Teams: ["admin"], Apps: [], ServiceName: "silent", Info: null }]);
      expect((await quick.admin.ok(quick.admin.get("/services/garbage"))).json()).toEqual([{ Name: "junk", Teams: ["admin"], Apps: [], ServiceName: "garbage", Info: null }]);
      expect((await quick.admin.ok(quick.admin.get("/services/instances/mute"))).json()).toMatchObject({ name: "mute", info: null });
      const calls = (await quick.admin.get("/provider-calls?instance=mute")).json<ProviderCall[]>();
      expect(calls.filter((call) => call.method === "GET").map((call) => `${call.path} ${call.error}`)).toEqual([
        `/resources/mute no answer within ${GIVE_UP_MS / 1000} s`,
        `/resources/mute no answer within ${GIVE_UP_MS / 1000} s`,
      ]);
      const status = await quick.admin.get("/services/instances/mute/status");
      expect([status.status, status.text]).toEqual([500, `Failed to get status of instance mute: the provider did not answer (no answer within ${GIVE_UP_MS / 1000} s)`]);
    });
  });

  it("a provider that is down: a clear error and no instance", async () => {
    await t.admin.ok(t.admin.post("/services", { text: manifest("down", `http://127.0.0.1:${await freePort()}`) }));
    const answer = await t.admin.post("/services/instances", { json: { name: "nowhere", service_name: "down" } });
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/^Failed to create the instance nowhere: the provider did not answer \(.*ECONNREFUSED/);
    expect((await t.admin.get("/services/instances/nowhere")).status).toBe(404);
  });
});

describe("the platform's own store failing", () => {
  /** A store whose writes of one kind of record fail, once `failing` names it. */
  class FailingStore extends MemoryPlatformStore {
    failing?: keyof Records;
    override async put<K extends keyof Records>(kind: K, key: string, value: Records[K]) {
      if (kind === this.failing) throw new Error("disk full");
      return super.put(kind, key, value);
    }
  }
  const actor = { email: "ops@example.com", teams: ["ops"], admin: false };

  async function contextWith(provider: TestProvider) {
    providers.push(provider);
    const store = new FailingStore();
    const context = createContext(store);
    await createUser(context, actor.email, "ops-password");
    await store.put("teams", "ops", { name: "ops", users: [actor.email] });
    await createService(context, actor, manifest("undo", provider.running.url));
    return { store, context };
  }

  it("when the platform cannot store the instance, it removes it from the provider again", async () => {
    const provider = await startTestProvider();
    const { store, context } = await contextWith(provider);
    store.failing = "instances";
    await expect(createInstance(context, actor, { name: "lost", service: "undo" })).rejects.toThrow("disk full");
    expect(provider.handlers()).toEqual(["create", "destroy"]);
  });

  it("when the platform cannot record an unbind, the provider gets the binding back and the app keeps its variables", async () => {
    const provider = await startTestProvider();
    const { store, context } = await contextWith(provider);
    await createInstance(context, actor, { name: "kept", service: "undo" });
    await createApp(context, actor, { name: "keeper", platform: "node" });
    await bind(context, actor, "kept", "keeper");
    provider.received.length = 0;
    store.failing = "instances";
    await expect(unbind(context, actor, "kept", "keeper")).rejects.toThrow("disk full");
    // Undone newest first: the variables back into the app, bind-app again, the unit bound again.
    expect(provider.handlers()).toEqual(["unbindUnit", "unbindApp", "bindApp", "bindUnit"]);
    expect((await store.get("apps", "keeper"))!.serviceEnvs.map((bound) => bound.instance)).toEqual(["kept"]);
    expect((await store.get("instances", "kept"))!.apps).toEqual(["keeper"]);
  });
});

describe("whole lives of the other variants", () => {
  it("Variant B: create with a name only, bind and unbind by hostname, no unit calls", async () => {
    const provider = await startTestProvider();
    const { instance, app } = await setUp("oldest", provider, { variant: "B" });
    const bound = await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    expect(Object.keys(bound.json())).toContain("REDIS_HOST");
    await t.admin.ok(t.admin.put(`/apps/${app}/units`, { text: "1" }));
    expect((await t.admin.get(`/services/instances/${instance}/status`)).text).toBe(`Service instance "${instance}" is up`);
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}`));
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}`));
    const calls = (await t.admin.get(`/provider-calls?service=oldest`)).json<ProviderCall[]>();
    expect(calls.map((call) => `${call.method} ${call.path} ${call.status}`)).toEqual([
      "POST /resources 201",
      `POST /resources/${instance} 201`,
      `GET /resources/${instance}/status 204`,
      `DELETE /resources/${instance}/hostname/${app}.localhost 200`,
      `DELETE /resources/${instance} 200`,
    ]);
    expect(calls[0]!.requestBody).toBe(`name=${instance}`);
    expect(calls[0]!.requestHeaders["X-Tsuru-User"]).toBeUndefined();
  });

  it("current with JSON bodies: today's calls, X-Tsuru-* headers and placement, no unit binds, the status text", async () => {
    const provider = await startTestProvider({ status: async () => ({ message: "ready, 3 keys" }) });
    const { instance, app } = await setUp("today", provider, { variant: "current", encoding: "json" }, 2);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    expect(provider.handlers()).toEqual(["bindApp"]);
    expect(provider.received[0]!.request).toMatchObject({
      appName: app,
      appHosts: [`${app}.localhost`],
      placement: { poolName: "local", clusterName: "local" },
    });
    expect(provider.received[0]!.context).toMatchObject({ user: "admin@example.com", eventId: expect.stringMatching(/^[0-9a-f]{24}$/) });
    await t.admin.ok(t.admin.put(`/apps/${app}/units`, { text: "1" }));
    expect(provider.handlers()).toEqual(["bindApp"]);
    expect((await t.admin.get(`/services/instances/${instance}/status`)).text).toBe(`Service instance "${instance}" is ready, 3 keys`);
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}`));
    await t.admin.ok(t.admin.delete(`/services/instances/${instance}`));
    expect(provider.handlers()).toEqual(["bindApp", "unbindApp", "destroy"]);
    const calls = (await t.admin.get(`/provider-calls?service=today`)).json<ProviderCall[]>();
    const create = calls.find((call) => call.method === "POST" && call.path === "/resources")!;
    expect(create.requestHeaders["Content-Type"]).toBe("application/json");
    expect(JSON.parse(create.requestBody)).toMatchObject({ name: instance, team: "admin", user: "admin@example.com" });
  });
});

