/**
 * A broker shaped as the reference broker (cloudfoundry/overview-broker: Basic auth admin/password,
 * binding credentials `username` and `password`, no background operations) on the local platform,
 * end to end; the real platform's statuses and words for a broker's failures; and brokers that
 * cannot stall a listing: one that never answers, one whose catalog is too big.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { startTestPlatform, type TestPlatform } from "./helpers.js";

/** overview-broker's defaults (BROKER_USERNAME, BROKER_PASSWORD). */
const AUTH = { Username: "admin", Password: "password" };
const SERVICE_ID = randomUUID();
const PLAN_ID = randomUUID();

interface Received {
  method: string;
  url: string;
  body: Record<string, unknown>;
}

interface Listening {
  url: string;
  close(): Promise<void>;
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Listening & { server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The reference broker's behaviour the platform relies on, and a last_operation it does not implement (501). */
async function startReferenceLikeBroker(): Promise<Listening & { received: Received[]; issued: Map<string, Record<string, string>> }> {
  const received: Received[] = [];
  const issued = new Map<string, Record<string, string>>();
  const json = (res: ServerResponse, status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
  const broker = await listen((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString()));
    req.on("end", () => {
      const url = req.url ?? "";
      received.push({ method: req.method ?? "", url, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} });
      if (req.headers.authorization !== `Basic ${Buffer.from(`${AUTH.Username}:${AUTH.Password}`).toString("base64")}`) return json(res, 401, {});
      const path = url.split("?")[0]!;
      if (req.method === "GET" && path === "/v2/catalog") {
        return json(res, 200, {
          services: [{ id: SERVICE_ID, name: "overview-service", description: "Provides an overview of any service instances and bindings", bindable: true, plans: [{ id: PLAN_ID, name: "small", description: "A small plan" }] }],
        });
      }
      if (path.endsWith("/last_operation")) return res.writeHead(501).end();
      const binding = /^\/v2\/service_instances\/[^/]+\/service_bindings\/([^/]+)$/.exec(path);
      if (binding && req.method === "PUT") {
        // overview-broker's binding: `username` and a random 16-character `password`.
        const credentials = { username: "admin", password: randomBytes(12).toString("base64url").slice(0, 16) };
        issued.set(binding[1]!, credentials);
        return json(res, 201, { credentials });
      }
      if (/^\/v2\/service_instances\/[^/]+$/.test(path) && req.method === "PUT") return json(res, 201, {});
      return json(res, 200, {});
    });
  });
  return { ...broker, received, issued };
}

describe("a broker shaped as the reference broker, on the local platform", () => {
  let t: TestPlatform;
  let broker: Awaited<ReturnType<typeof startReferenceLikeBroker>>;

  beforeAll(async () => {
    broker = await startReferenceLikeBroker();
    t = await startTestPlatform("memory");
  });
  afterAll(async () => {
    await t?.stop();
    await broker?.close();
  });

  it("refuses a broker URL with a user and password in it, saying where the credentials go", async () => {
    const url = new URL(broker.url);
    url.username = "admin";
    url.password = "s3cret-pw";
    const refused = await t.admin.post("/brokers", { json: { Name: "overview", URL: url.toString() } });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("Config.AuthConfig.BasicAuthConfig");
    expect(refused.text).not.toContain("s3cret-pw");
    expect((await t.admin.get("/brokers")).status).toBe(204);
  });

  it("registers it, creates an instance, binds it: the app's environment holds its credentials; then unbinds and removes all", async () => {
    await t.admin.ok(t.admin.post("/brokers", { json: { Name: "overview", URL: broker.url, Config: { AuthConfig: { BasicAuthConfig: AUTH }, Context: { cluster: "local" } } } }), 201);
    const listed = (await t.admin.ok(t.admin.get("/services/instances"))).json<Array<{ service: string }>>();
    expect(listed.map((entry) => entry.service)).toContain("overview::overview-service");
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "ov", service_name: "overview::overview-service", plan: "small" } }), 201);

    const names = (await t.admin.ok(t.admin.put("/services/instances/ov/web"))).json<Record<string, string>>();
    expect(Object.keys(names).sort()).toEqual(["password", "username"]);
    const [credentials] = [...broker.issued.values()];
    const run = async (command: string) => (await t.admin.ok(t.admin.post("/apps/web/run?once=true", { text: command }))).text.trim();
    expect(await run('printf %s "$username:$password"')).toBe(`${credentials!.username}:${credentials!.password}`);

    // The context brokerClient sent: request and event ids, the org and space on a provision, the broker's own Config.Context.
    const provision = broker.received.find((request) => request.method === "PUT" && !request.url.includes("service_bindings"))!;
    const bindRequest = broker.received.find((request) => request.method === "PUT" && request.url.includes("service_bindings"))!;
    expect(Object.keys(provision.body.context as object).sort()).toEqual(["cluster", "event_id", "organization_guid", "request_id", "space_guid"]);
    expect(Object.keys(bindRequest.body.context as object).sort()).toEqual(["cluster", "event_id", "request_id"]);
    // Binds go without accepts_incomplete, as the real platform's OSB client sent them.
    expect(bindRequest.url).not.toContain("accepts_incomplete");
    // The timeline shows the credentials' names, never their values.
    const calls = (await t.admin.ok(t.admin.get(`/provider-calls?service=${encodeURIComponent("overview::overview-service")}`))).json<ProviderCall[]>();
    const bindCall = calls.find((call) => call.path.includes("/service_bindings/"))!;
    expect(bindCall.answer).toContain('"password":"<string>"');
    expect(JSON.stringify(calls)).not.toContain(credentials!.password);

    await t.admin.ok(t.admin.delete("/services/instances/ov/web"));
    expect(await run('printf %s "${password:-none}"')).toBe("none");
    await t.admin.ok(t.admin.delete("/services/instances/ov"));
    const deletes = broker.received.filter((request) => request.method === "DELETE").map((request) => request.url.split("?")[0]!.replace(/[0-9a-f-]{36}/g, "<id>"));
    expect(deletes).toEqual(["/v2/service_instances/<id>/service_bindings/<id>", "/v2/service_instances/<id>"]);
  });

  it("answers a broker's failures with the real platform's statuses and words", async () => {
    // getPlan's words, a plain error.
    const badPlan = await t.admin.post("/services/instances", { json: { name: "ov2", service_name: "overview::overview-service", plan: "huge" } });
    expect([badPlan.status, badPlan.text.trim()]).toEqual([500, "invalid plan: huge"]);
    // No last_operation (501): serviceInstanceStatus's 500 with the OSB client's error, not "down".
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "ov3", service_name: "overview::overview-service", plan: "small" } }), 201);
    const status = await t.admin.get("/services/instances/ov3/status");
    expect([status.status, status.text.trim()]).toEqual([
      500,
      "Could not retrieve status of service instance, error: Status: 501; ErrorMessage: <nil>; Description: <nil>; ResponseError: unexpected end of JSON input",
    ]);
    await t.admin.ok(t.admin.delete("/services/instances/ov3"));
  });
});

describe("brokers that cannot stall a listing", () => {
  let t: TestPlatform;
  let silent: Listening;
  let huge: Listening;
  const terminal: string[] = [];

  beforeAll(async () => {
    // Takes every request and never answers.
    silent = await listen(() => {});
    // A catalog over the 1 MiB the platform reads.
    huge = await listen((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ services: [], padding: "x".repeat(2 << 20) })));
    t = await startTestPlatform("memory", { say: (line) => terminal.push(line) });
    await t.admin.ok(t.admin.post("/brokers", { json: { Name: "silent", URL: silent.url } }), 201);
    await t.admin.ok(t.admin.post("/brokers", { json: { Name: "huge", URL: huge.url } }), 201);
  });
  afterAll(async () => {
    await t?.stop();
    await silent?.close();
    await huge?.close();
  });

  it("answers GET /services within 2 s, twice in a row, naming the brokers left out", async () => {
    const user = await t.admin.user("dana@example.com");
    for (const api of [t.admin, user]) {
      const started = performance.now();
      const answer = await api.ok(api.get("/services/instances"));
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(answer.headers.get("X-Brokers-Left-Out")).toBe("huge, silent");
      expect(answer.json()).toEqual([]);
    }
    const started = performance.now();
    await t.admin.ok(t.admin.get("/services"));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it("says on the terminal why a catalog was left out, once per failed read", async () => {
    expect(terminal.filter((line) => line.startsWith("[Broker=huge] error getting catalog")).length).toBe(1);
    expect(terminal.find((line) => line.startsWith("[Broker=huge]"))).toContain("larger than the 1 MiB the platform reads from a broker");
  });
});

describe("a broker whose catalog is built to hurt the platform", () => {
  let t: TestPlatform;
  let hostile: Listening;

  beforeAll(async () => {
    // 5 000 levels of nesting in a plan's metadata (10 KB), and a service whose name carries
    // an escape sequence beside one with a plain name.
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const plan = (name: string) => `{"id":"${name}-plan","name":"small","description":"d\\u001b[2J","metadata":${deep}}`;
    const catalog = `{"services":[{"id":"s1","name":"deep","description":"d","bindable":true,"plans":[${plan("deep")}]},` +
      `{"id":"s2","name":"evil\\u001b]0;title\\u0007","description":"d","bindable":true,"plans":[${plan("evil")}]}]}`;
    hostile = await listen((_req, res) => res.writeHead(200, { "Content-Type": "application/json" }).end(catalog));
    t = await startTestPlatform("memory");
    await t.admin.ok(t.admin.post("/brokers", { json: { Name: "hostile", URL: hostile.url } }), 201);
  });
  afterAll(async () => {
    await t?.stop();
    await hostile?.close();
  });

  it("still lists services: the deep catalog is served, the service with an escape sequence in its name is left out", async () => {
    for (let round = 0; round < 2; round += 1) {
      const answer = await t.admin.ok(t.admin.get("/services/instances"));
      expect(answer.json()).toEqual([{ service: "hostile::deep", instances: [] }]);
      expect(answer.text).not.toContain("\u001b");
    }
    const plans = await t.admin.ok(t.admin.get("/services/hostile::deep/plans"));
    expect(plans.text).not.toContain("\u001b");
  });
});
