/**
 * The local platform where issue 32 found it unlike the real one (tsuru HEAD): who an instance
 * belongs to, a service's owner team, today's client's routes for one instance, instance update,
 * Go's booleans, the bind pipeline's undo, the real messages, unbindall's stream, swap, and
 * units removed from several instances. Each test names the real function it follows.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createProvider, NotFoundError, ProviderError } from "provider-kit";
import { startPlatform } from "../../src/platform/platform.js";
import { freePort } from "../../src/redis/server.js";
import { AUTH, fakeResource, PASSWORD, USER } from "../../../../test/support/fake-provider.js";
import { ADMIN, Api, manifest, readStream, startTestPlatform, startTestProvider, tsuru, type TestPlatform, type TestProvider } from "./helpers.js";

let t: TestPlatform;
const providers: TestProvider[] = [];
let serial = 0;

beforeAll(async () => {
  t = await startTestPlatform("memory");
});
afterAll(() => t.stop());
afterEach(async () => {
  await Promise.all(providers.splice(0).map((provider) => provider.stop()));
});

const unique = (prefix: string) => `${prefix}${++serial}`;

async function provider(overrides: Parameters<typeof startTestProvider>[0] = {}): Promise<TestProvider> {
  const started = await startTestProvider(overrides);
  providers.push(started);
  return started;
}

/** A user in the given teams (created by the user, so the user is their member). */
async function member(...teams: string[]): Promise<{ api: Api; email: string }> {
  const email = `${unique("user")}@example.com`;
  const api = await t.admin.user(email);
  for (const team of teams) await api.ok(api.post("/teams", { json: { name: team } }));
  return { api, email };
}

/** The service `id` registered by the admin as the team `admin`'s, an instance of it, and an app. */
async function setUp(id: string, running: TestProvider, units = 1) {
  await t.admin.ok(t.admin.post("/services", { text: manifest(id, running.running.url, { team: "admin" }) }));
  await t.admin.ok(t.admin.post("/services/instances", { json: { name: `${id}-i`, service_name: id } }), 201);
  const app = unique("app-");
  await t.admin.ok(t.admin.post("/apps", { json: { name: app, platform: "node" } }));
  if (units > 1) await t.admin.ok(t.admin.put(`/apps/${app}/units`, { text: String(units - 1) }));
  running.received.length = 0;
  return { instance: `${id}-i`, app };
}

const client = (method: string, path: string, form?: Record<string, string | string[]>) => tsuru(t.url, t.admin.token, method, `/1.0${path}`, form);

describe("an instance belongs to its owner team only (CreateServiceInstance: Teams = [TeamOwner])", () => {
  it("another team of its creator neither lists, binds nor removes it until it is granted", async () => {
    const [alpha, beta] = [unique("alpha"), unique("beta")];
    const { api: creator } = await member(alpha, beta);
    const { api: other, email } = await member();
    await creator.ok(creator.put(`/teams/${beta}/${email}`));
    const id = unique("owned");
    await provider().then((running) => creator.ok(creator.post("/services", { text: manifest(id, running.running.url, { team: alpha }) })));
    await creator.ok(creator.put(`/services/${id}/${beta}`));
    await creator.ok(creator.post("/services/instances", { json: { name: `${id}-db`, service_name: id, owner: alpha } }), 201);
    const app = unique("app-");
    await other.ok(other.post("/apps", { json: { name: app, platform: "node" } }));

    expect((await creator.get(`/services/instances/${id}-db`)).json()).toMatchObject({ teams: [alpha], teamowner: alpha });
    expect((await other.get("/services/instances")).json()).toContainEqual({ service: id, instances: [] });
    expect((await other.get(`/services/instances/${id}-db`)).status).toBe(403);
    expect((await other.put(`/services/instances/${id}-db/${app}`)).status).toBe(403);
    expect((await other.delete(`/services/instances/${id}-db`)).status).toBe(403);

    await creator.ok(creator.put(`/services/instances/permission/${id}-db/${beta}`));
    expect((await other.get("/services/instances")).json()).toContainEqual({ service: id, instances: [`${id}-db`] });
    await other.ok(other.put(`/services/instances/${id}-db/${app}`));
  });
});

describe("a service has one owner team (serviceCreate)", () => {
  it("the manifest's team, or the user's only team; several and none named is a 400", async () => {
    const running = await provider();
    const [alpha, beta] = [unique("alpha"), unique("beta")];
    const { api: both } = await member(alpha, beta);
    const id = unique("svc");
    const refused = await both.post("/services", { text: manifest(id, running.running.url) });
    expect([refused.status, refused.text]).toEqual([400, "You must provide a team responsible for this service in the manifest file."]);
    await both.ok(both.post("/services", { text: manifest(id, running.running.url, { team: beta }) }));
    expect((await both.get(`/services/${id}/provider`)).json()).toMatchObject({ teams: [beta] });
    // The client sends the manifest's team as a form field.
    const viaClient = unique("svc");
    const form = { id: viaClient, username: "redis", password: "s3cret", endpoint: running.running.url, team: alpha };
    expect((await tsuru(t.url, both.token, "POST", "/1.0/services", form)).status).toBe(201);
    expect((await both.get(`/services/${viaClient}/provider`)).json()).toMatchObject({ teams: [alpha] });

    const { api: single } = await member(unique("solo"));
    const solo = unique("svc");
    await single.ok(single.post("/services", { text: manifest(solo, running.running.url) }));
    expect((await single.get(`/services/${solo}/provider`)).json<{ teams: string[] }>().teams).toHaveLength(1);
    expect((await single.post("/services", { text: manifest(unique("svc"), running.running.url, { team: alpha }) })).status).toBe(403);
  });
});

describe("today's client routes for one instance", () => {
  it("service-instance-info, -status, -update and -remove are served", async () => {
    const running = await provider();
    const id = unique("cli");
    const { instance } = await setUp(id, running);
    const info = await client("GET", `/services/${id}/instances/${instance}`);
    expect(info.status).toBe(200);
    expect(JSON.parse(info.text)).toMatchObject({ Apps: [], Teams: ["admin"], TeamOwner: "admin", PlanName: "", Description: "" });
    // serviceInstanceStatus: no final dot.
    const status = await client("GET", `/services/${id}/instances/${instance}/status`);
    expect([status.status, status.text]).toEqual([200, `Service instance "${instance}" is up`]);

    const update = await client("PUT", `/services/${id}/instances/${instance}`, { description: "the cache", plan: "large", teamowner: "admin", tag: ["a", "b"], "parameters.size": "2" });
    expect(update.status).toBe(200);
    expect(running.handlers()).toContain("update");
    expect(JSON.parse((await client("GET", `/services/${id}/instances/${instance}`)).text)).toMatchObject({ Description: "the cache", PlanName: "large", Tags: ["a", "b"], Parameters: { size: "2" } });

    const removed = readStream(await client("DELETE", `/services/${id}/instances/${instance}`));
    expect(removed).toEqual({ messages: ["service instance successfully removed\n"], error: undefined });
    expect((await client("GET", `/services/${id}/instances/${instance}`)).status).toBe(404);
  });

  it("a wrong service in the path is a 404", async () => {
    const { instance } = await setUp(unique("cli"), await provider());
    expect((await client("GET", `/services/other/instances/${instance}`)).status).toBe(404);
  });
});

describe("instance update (updateServiceInstance)", () => {
  it("sends the provider's PUT /resources/<i>; its failure, 405 included, reaches the user and leaves the instance as it was", async () => {
    const updates: string[] = [];
    const running = await provider({
      update: async (request) => {
        updates.push(`${request.instance} ${request.plan}`);
        throw new ProviderError("plans cannot change here", 405);
      },
    });
    const id = unique("upd");
    const { instance } = await setUp(id, running);
    const answer = await client("PUT", `/services/${id}/instances/${instance}`, { plan: "large", teamowner: "admin" });
    expect([answer.status, answer.text]).toEqual([500, `Failed to update the instance ${instance}: invalid response: plans cannot change here (code: 405)`]);
    expect(updates).toEqual([`${instance} large`]);
    expect((await t.admin.get(`/services/instances/${instance}`)).json()).toMatchObject({ planname: "" });
    const nothing = await client("PUT", `/services/${id}/instances/${instance}`, { teamowner: "admin" });
    expect([nothing.status, nothing.text]).toEqual([400, "Neither description, team owner, tags, plan nor plan parameters were set. You must define at least one."]);
  });
});

describe("boolean switches as Go's strconv.ParseBool", () => {
  it("force=1, T and True force an unbind; yes forces nothing (and is no error)", async () => {
    let broken = false;
    const running = await provider({
      unbindApp: async () => {
        if (broken) throw new ProviderError("the binding's user is gone", 500);
      },
    });
    const { instance, app } = await setUp(unique("bool"), running);
    for (const value of ["1", "T", "True"]) {
      broken = false;
      await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
      broken = true;
      expect((await t.admin.delete(`/services/instances/${instance}/${app}?force=yes`)).status).toBe(500);
      await t.admin.ok(t.admin.delete(`/services/instances/${instance}/${app}?force=${value}`));
    }
  });
});

/** A provider answering bind-app with a body that is no JSON object, recording what it is sent. */
async function garbageBindProvider(): Promise<{ url: string; seen: string[]; stop(): Promise<void> }> {
  const seen: string[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    const [status, body] = req.method === "POST" && req.url === "/resources" ? [201, ""] : req.url?.endsWith("/bind-app") && req.method === "POST" ? [201, "<html>ok</html>"] : [404, "not here"];
    res.writeHead(status, { "Content-Type": "text/plain" }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("the bind pipeline (bindServiceInstance, bindAppEndpointAction)", () => {
  it("an answer that cannot be used is not undone at the provider, and the failure carries the instance's status", async () => {
    const garbage = await garbageBindProvider();
    try {
      const id = unique("garbage");
      await t.admin.ok(t.admin.post("/services", { text: manifest(id, garbage.url, { team: "admin" }) }));
      await t.admin.ok(t.admin.post("/services/instances", { json: { name: "db", service_name: id } }), 201);
      const app = unique("app-");
      await t.admin.ok(t.admin.post("/apps", { json: { name: app, platform: "node" } }));
      const answer = await t.admin.put(`/services/instances/db/${app}`);
      expect(answer.status).toBe(500);
      expect(answer.text).toMatch(new RegExp(`^Failed to bind the instance "${id}/db" to the app "${app}": its answer cannot be used \\(.*\\) \\("db" is not implemented for this service\\)$`));
      expect(garbage.seen).toEqual(["POST /resources", "POST /resources/db/bind-app", "GET /resources/db/status"]);
      await t.admin.ok(t.admin.delete("/services/instances/db?ignoreerrors=true"));
    } finally {
      await garbage.stop();
    }
  });

  it("a second bind: 500 app is already bound to this service instance", async () => {
    const { instance, app } = await setUp(unique("twice"), await provider());
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    const again = await t.admin.put(`/services/instances/${instance}/${app}`);
    expect([again.status, again.text]).toEqual([500, `app is already bound to this service instance ("${instance}" is up)`]);
  });
});

describe("messages worded as the real platform's", () => {
  it("buildErrorMessage, the name check, a destroy answered 404, a forced unbind-app-endpoint", async () => {
    let lost = false;
    const full = await provider({
      create: async () => {
        throw new ProviderError("no room", 500);
      },
    });
    const running = await provider({
      unbindApp: async () => {
        if (lost) throw new ProviderError("gone", 500);
      },
      destroy: async (request) => {
        if (lost) throw new NotFoundError(`Instance "${request.instance}" not found.`);
      },
    });
    const id = unique("words");
    const { instance, app } = await setUp(id, running);
    const fullId = unique("full");
    await t.admin.ok(t.admin.post("/services", { text: manifest(fullId, full.running.url, { team: "admin" }) }));
    const failedCreate = await t.admin.post("/services/instances", { json: { name: "boom1", service_name: fullId } });
    expect([failedCreate.status, failedCreate.text]).toEqual([500, "Failed to create the instance boom1: invalid response: no room (code: 500)"]);
    const taken = await t.admin.post("/services/instances", { json: { name: instance, service_name: id } });
    expect([taken.status, taken.text]).toEqual([409, "instance name already exists."]);

    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    lost = true;
    const unbound = readStream(await tsuru(t.url, t.admin.token, "DELETE", `/1.13/services/${id}/instances/${instance}/apps/${app}?force=true`));
    expect(unbound.messages).toContain(`[unbind-app-endpoint] ignored error due to force: Failed to unbind ("/resources/${instance}/bind-app"): invalid response: gone (code: 500)\n`);
    const destroy = await t.admin.delete(`/services/instances/${instance}`);
    expect([destroy.status, destroy.text]).toEqual([500, "instance does not exist in the service API (if the provider no longer has it, remove it with ?ignoreerrors=true)"]);
  });
});

describe("?unbindall=true, then a destroy that fails (removeServiceInstance)", () => {
  it("streams each app unbound before the error", async () => {
    const running = await provider({
      destroy: async () => {
        throw new ProviderError("cannot drop it now", 500);
      },
    });
    const id = unique("unball");
    const { instance, app } = await setUp(id, running);
    await t.admin.ok(t.admin.put(`/services/instances/${instance}/${app}`));
    const removal = readStream(await client("DELETE", `/services/${id}/instances/${instance}?unbindall=true`));
    expect(removal.messages).toEqual([`Unbind app "${app}" ...\n`, `\nInstance "${instance}" is not bound to the app "${app}" anymore.\n`]);
    // The provider answered: it still has the instance, so no ?ignoreerrors=true is offered.
    expect(removal.error).toBe(`Failed to destroy the instance ${instance}: invalid response: cannot drop it now (code: 500)`);
  });
});

describe("swap (the platform's swap since 2024)", () => {
  it("today's route answers 412 swapping is deprecated; the spec's PUT /swap still swaps", async () => {
    const [one, two] = [unique("app-"), unique("app-")];
    for (const app of [one, two]) await t.admin.ok(t.admin.post("/apps", { json: { name: app, platform: "node" } }));
    for (const path of ["/1.0/swap", "/swap"]) {
      const answer = await tsuru(t.url, t.admin.token, "POST", path, { app1: one, app2: two, cnameOnly: "false", force: "false" });
      expect([answer.status, answer.text], path).toEqual([412, "swapping is deprecated"]);
    }
    await t.admin.ok(t.admin.put(`/swap?app1=${one}&app2=${two}`));
  });
});

describe("removing a unit bound to several instances", () => {
  it("binds the units already unbound again when a later instance refuses", async () => {
    const willing = await provider();
    const refusing = await provider({
      unbindUnit: async () => {
        throw new ProviderError("units are pinned", 500);
      },
    });
    const first = await setUp(unique("first"), willing, 2);
    const second = unique("second");
    await t.admin.ok(t.admin.post("/services", { text: manifest(second, refusing.running.url, { team: "admin" }) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: `${second}-i`, service_name: second } }), 201);
    await t.admin.ok(t.admin.put(`/services/instances/${first.instance}/${first.app}`));
    await t.admin.ok(t.admin.put(`/services/instances/${second}-i/${first.app}`));
    willing.received.length = 0;

    expect((await t.admin.delete(`/apps/${first.app}/units`, { text: "1" })).status).toBe(500);
    expect(willing.handlers()).toEqual(["unbindUnit", "bindUnit"]);
    expect((await t.admin.get(`/apps/${first.app}`)).json<{ Units: unknown[] }>().Units).toHaveLength(2);
  });
});

describe("a seeded start", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "platform-start-"));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  /** Lines said on the platform's terminal, and a wait for one matching. */
  function terminal() {
    const lines: string[] = [];
    const waiting: Array<{ pattern: RegExp; found: (line: string) => void }> = [];
    return {
      lines,
      say: (line: string) => {
        lines.push(line);
        for (const wait of waiting.filter((each) => each.pattern.test(line))) wait.found(line);
      },
      line: (pattern: RegExp) => new Promise<string>((found) => (lines.some((line) => pattern.test(line)) ? found(lines.find((line) => pattern.test(line))!) : waiting.push({ pattern, found }))),
    };
  }

  it("answers 503 with Retry-After while it waits for a provider that is not up yet, then seeds once it is", async () => {
    const providerPort = await freePort();
    const seedFile = join(dir, "late.yaml");
    await writeFile(
      seedFile,
      stringify({
        services: [{ id: "late", username: USER, password: PASSWORD, endpoint: { production: `http://127.0.0.1:${providerPort}` } }],
        instances: [{ name: "late-db", service: "late" }],
      }),
    );
    const port = await freePort();
    const said = terminal();
    const starting = startPlatform({ port, host: "127.0.0.1", admin: ADMIN, state: { kind: "memory" }, version: "0.0.0-test", seedFile, say: said.say, providerWaitMs: 120_000 });
    starting.catch(() => {});
    expect(await said.line(/^seed: waiting/)).toBe(`seed: waiting up to 120 s for the provider of the service late (http://127.0.0.1:${providerPort}) to answer...`);
    const early = await fetch(`http://127.0.0.1:${port}/healthcheck`);
    expect([early.status, early.headers.get("retry-after")]).toEqual([503, "1"]);

    const late = createProvider(fakeResource().handlers, { auth: AUTH, registry: false, logger: pino({ level: "silent" }) });
    const server = createServer(late).listen(providerPort, "127.0.0.1");
    try {
      const platform = await starting;
      try {
        expect(said.lines).toContain("seed: the provider of the service late answers");
        const admin = await new Api(platform.url).login(ADMIN.email, ADMIN.password);
        expect((await admin.get("/services/instances/late-db")).status).toBe(200);
      } finally {
        await platform.close();
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await late.close();
    }
  });

  it("on a fresh store, a seeded instance the provider already has: says what to do", async () => {
    const running = await provider();
    const seedFile = join(dir, "kept.yaml");
    await writeFile(
      seedFile,
      stringify({
        services: [{ id: "kept", username: USER, password: PASSWORD, endpoint: { production: running.running.url } }],
        instances: [{ name: "kept-db", service: "kept" }],
      }),
    );
    const first = await startTestPlatform("memory", { seedFile });
    await first.stop();
    // The memory store is gone with it, as a removed data directory is; the provider kept the instance.
    await expect(startTestPlatform("memory", { seedFile })).rejects.toThrow(
      /^Seeding instance kept-db failed: the provider of the service kept already has an instance "kept-db" \(.*\)\. A fresh data directory does not know it: start the platform on its earlier --data-dir, or remove the instance at the provider/,
    );
  });
});
