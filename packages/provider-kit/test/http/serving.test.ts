/**
 * One request pipeline, however the provider is served: `.listen()`, `http.createServer(provider)`,
 * mounted under a prefix of another Express app or of an `express.Router`, or at their root. Every error of the
 * provider's own routes (and of routes added on it) is answered by the provider itself, with its
 * plain-text body and request id, never by the parent app; the parent's routes, before and after
 * the provider, see none of its auth, body reading or log line.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import { pino } from "pino";
import request from "supertest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Writable } from "node:stream";
import { createProvider, MemoryStore, NotReadyError, type Provider } from "../../src/index.js";
import { OSB } from "../osb/helpers.js";
import { AUTH, FORM, GOOD_AUTH, fakeResource, requestLines, type LogLine } from "../../../../test/support/fake-provider.js";

/** The parent app's own routes and answers, around the provider. */
function parentApp(mount: (parent: express.Express) => void, { errorHandler }: { errorHandler: boolean }): express.Express {
  const parent = express();
  // The parent's routes read their body themselves: what they echo shows nobody read it before them.
  const echo = (req: Request, res: Response) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => void res.json({ from: "parent", path: req.path, body: Buffer.concat(chunks).toString() }));
  };
  parent.all("/before", echo);
  mount(parent);
  parent.all("/after", echo);
  parent.use((_req: Request, res: Response) => void res.status(404).json({ from: "parent 404" }));
  // Without an error handler of its own, an error passed to the parent gets Express's HTML page.
  if (errorHandler) {
    parent.use((error: Error, _req: Request, res: Response, _next: NextFunction) => void res.status(500).json({ from: "parent errors", message: error.message }));
  }
  return parent;
}

interface Way {
  name: string;
  /** Where the provider's routes are: `""` at the root, `/redis` under the prefix. */
  base: string;
  /** True when another app's routes are around the provider. */
  mounted: boolean;
  serve(provider: Provider): Server;
}

const WAYS: Way[] = [
  { name: "provider.listen()", base: "", mounted: false, serve: (provider) => provider.listen(0, "127.0.0.1") },
  { name: "http.createServer(provider)", base: "", mounted: false, serve: (provider) => createServer(provider).listen(0, "127.0.0.1") },
  {
    name: 'mounted under a prefix: app.use("/redis", provider)',
    base: "/redis",
    mounted: true,
    serve: (provider) => parentApp((parent) => parent.use("/redis", provider), { errorHandler: true }).listen(0, "127.0.0.1"),
  },
  {
    name: "mounted at the root: app.use(provider)",
    base: "",
    mounted: true,
    serve: (provider) => parentApp((parent) => parent.use(provider), { errorHandler: false }).listen(0, "127.0.0.1"),
  },
  {
    name: 'in a router, under a prefix: router.use("/redis", provider)',
    base: "/redis",
    mounted: true,
    serve: (provider) => parentApp((parent) => parent.use(express.Router().use("/redis", provider)), { errorHandler: true }).listen(0, "127.0.0.1"),
  },
  {
    name: "in a router, at its root: router.use(provider)",
    base: "",
    mounted: true,
    serve: (provider) => parentApp((parent) => parent.use(express.Router().use(provider)), { errorHandler: false }).listen(0, "127.0.0.1"),
  },
];

interface Served {
  provider: Provider;
  server: Server;
  http: ReturnType<typeof request>;
  logs: LogLine[];
}

async function served(way: Way): Promise<Served> {
  const logs: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n")) if (line.trim() !== "") logs.push(JSON.parse(line) as LogLine);
      done();
    },
  });
  const fake = fakeResource({
    bindApp: async (req) => {
      if (req.instance === "provisioning") throw new NotReadyError();
      throw new Error("the resource's driver crashed");
    },
  });
  fake.instances.set("taken", {});
  const provider = createProvider(fake.handlers, { auth: AUTH, registry: false, logger: pino(sink) });
  provider.get("/added/boom", () => {
    throw new Error("a route added on the provider failed");
  });
  const server = way.serve(provider);
  if (!server.listening) await new Promise((resolve) => server.once("listening", resolve));
  return { provider, server, http: request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), logs };
}

async function stop({ provider, server }: Served): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await provider.close();
}

interface ErrorCase {
  status: number;
  what: string;
  call(http: ReturnType<typeof request>, base: string): request.Test;
  /** The provider's plain-text answer. */
  body: RegExp;
}

const ERRORS: ErrorCase[] = [
  {
    status: 400,
    what: "a required field missing",
    call: (http, base) => http.post(`${base}/resources`).set("Authorization", GOOD_AUTH).type(FORM).send("plan=small"),
    body: /^Field "name" is required/,
  },
  {
    status: 400,
    what: "an undecodable path",
    call: (http, base) => http.get(`${base}/resources/%ZZ/status`).set("Authorization", GOOD_AUTH),
    body: /^The request path is not valid percent-encoding\.$/,
  },
  {
    status: 401,
    what: "no credentials",
    call: (http, base) => http.get(`${base}/resources/taken/status`),
    body: /^Authentication required: send the service's user name and password with HTTP Basic auth\.$/,
  },
  {
    status: 404,
    what: "destroying an unknown instance",
    call: (http, base) => http.delete(`${base}/resources/unknown`).set("Authorization", GOOD_AUTH),
    body: /^Instance "unknown" not found\.$/,
  },
  {
    status: 404,
    what: "unbinding an unknown instance",
    call: (http, base) => http.delete(`${base}/resources/unknown/bind-app`).set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web"),
    body: /^Instance "unknown" not found\.$/,
  },
  {
    status: 409,
    what: "creating an instance that exists",
    call: (http, base) => http.post(`${base}/resources`).set("Authorization", GOOD_AUTH).type(FORM).send("name=taken"),
    body: /^An instance with this name already exists\.$/,
  },
  {
    status: 412,
    what: "binding an instance still provisioning",
    call: (http, base) => http.post(`${base}/resources/provisioning/bind-app`).set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web"),
    body: /^Instance is still being provisioned; try again in a moment\.$/,
  },
  {
    status: 415,
    what: "a body of another Content-Type",
    call: (http, base) => http.post(`${base}/resources`).set("Authorization", GOOD_AUTH).type("text/plain").send("name=x"),
    body: /^Unsupported Content-Type "text\/plain"/,
  },
  {
    status: 500,
    what: "a handler failure",
    call: (http, base) => http.post(`${base}/resources/taken/bind-app`).set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web"),
    body: /^The provider failed to handle this call \(request id [\w-]+\)\. Its operator can find the details in the provider's log\.$/,
  },
  {
    status: 500,
    what: "a route added on the provider failing",
    call: (http, base) => http.get(`${base}/added/boom`).set("Authorization", GOOD_AUTH),
    body: /^The provider failed to handle this call \(request id [\w-]+\)/,
  },
];

function expectProviderAnswer(res: request.Response, status: number, body: RegExp): void {
  expect(res.status).toBe(status);
  expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
  expect(res.headers["x-request-id"]).toMatch(/^[\w-]+$/);
  expect(res.text).toMatch(body);
}

describe.each(WAYS)("served by $name", (way) => {
  let running: Served;
  beforeAll(async () => {
    running = await served(way);
  });
  afterAll(() => stop(running));

  it.each(ERRORS)("answers $status itself: $what", async ({ status, call, body }) => {
    expectProviderAnswer(await call(running.http, way.base), status, body);
  });

  it("answers every call of its own routes with one log line", async () => {
    const before = requestLines(running.logs).length;
    await running.http.get(`${way.base}/resources/taken/status`).set("Authorization", GOOD_AUTH).set("X-Request-ID", "one-line").expect(204);
    await expect.poll(() => requestLines(running.logs).find((line) => line.requestId === "one-line"), { timeout: 10_000 }).toMatchObject({
      route: "/resources/:instance/status",
      path: "/resources/taken/status",
      status: 204,
    });
    expect(requestLines(running.logs)).toHaveLength(before + 1);
  });

  it("answers 503 itself once closing", async () => {
    const closing = await served(way);
    try {
      await closing.provider.close();
      const res = await closing.http.get(`${way.base}/resources/taken/status`).set("Authorization", GOOD_AUTH);
      expectProviderAnswer(res, 503, /^The provider is shutting down; try again in a moment\.$/);
    } finally {
      await stop(closing);
    }
  });
});

/** OSB's errors under `/v2`, raised before a handler runs or by the route: JSON `{error?, description}` however it is served. */
const OSB_ERRORS: Array<{ status: number; what: string; call(http: ReturnType<typeof request>, base: string): request.Test }> = [
  { status: 401, what: "no credentials", call: (http, base) => http.get(`${base}/v2/catalog`).set("X-Broker-API-Version", "2.17") },
  { status: 412, what: "no version header", call: (http, base) => http.get(`${base}/v2/catalog`).set("Authorization", GOOD_AUTH) },
  {
    status: 400,
    what: "a body that is not JSON",
    call: (http, base) => http.put(`${base}/v2/service_instances/i1`).set("Authorization", GOOD_AUTH).set("X-Broker-API-Version", "2.17").type("json").send("{"),
  },
  { status: 404, what: "an unknown /v2 route", call: (http, base) => http.get(`${base}/v2/nothing-here`).set("Authorization", GOOD_AUTH).set("X-Broker-API-Version", "2.17") },
  {
    status: 404,
    what: "polling an instance that never existed",
    call: (http, base) => http.get(`${base}/v2/service_instances/never/last_operation`).set("Authorization", GOOD_AUTH).set("X-Broker-API-Version", "2.17"),
  },
];

describe.each(WAYS)("its /v2, served by $name", (way) => {
  let provider: Provider;
  let server: Server;
  beforeAll(async () => {
    const fake = fakeResource();
    provider = createProvider(fake.handlers, { auth: AUTH, registry: { store: new MemoryStore() }, osb: OSB, logger: pino({ level: "silent" }) });
    server = way.serve(provider);
    if (!server.listening) await new Promise((resolve) => server.once("listening", resolve));
  });
  afterAll(() => stop({ provider, server, http: request(""), logs: [] }));

  it.each(OSB_ERRORS)("answers $status itself, as OSB JSON: $what", async ({ status, call }) => {
    const res = await call(request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), way.base);
    expect(res.status).toBe(status);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual(expect.objectContaining({ description: expect.stringMatching(/\S/) }));
  });
});

describe.each(WAYS.filter((way) => !way.mounted))("as the server itself, served by $name", (way) => {
  let running: Served;
  beforeAll(async () => {
    running = await served(way);
  });
  afterAll(() => stop(running));

  it("answers a path of no route behind its auth: 401 without credentials, its 404 with them", async () => {
    expectProviderAnswer(await running.http.get("/nothing-here"), 401, /^Authentication required/);
    expectProviderAnswer(await running.http.get("/nothing-here").set("Authorization", GOOD_AUTH), 404, /^This provider has no route for GET \/nothing-here\.$/);
    expectProviderAnswer(await running.http.options("/resources/taken").set("Authorization", GOOD_AUTH), 404, /^This provider has no route for OPTIONS/);
  });
});

describe.each(WAYS.filter((way) => way.mounted))("the parent's routes, the provider $name", (way) => {
  let running: Served;
  beforeAll(async () => {
    running = await served(way);
  });
  afterAll(() => stop(running));

  it.each(["/before", "/after"])("%s answers without auth, its body unread, with no log line of the provider's", async (path) => {
    const res = await running.http.post(path).type(FORM).send("app-name=web").expect(200);
    expect(res.body).toEqual({ from: "parent", path, body: "app-name=web" });
    expect(res.headers["x-request-id"]).toBeUndefined();
    // A call of the provider's after it: its line comes, and none came for the parent's route.
    await running.http.get(`${way.base}/healthcheck`).set("X-Request-ID", `after-${path.slice(1)}`).expect(200);
    await expect.poll(() => requestLines(running.logs).some((line) => line.requestId === `after-${path.slice(1)}`), { timeout: 10_000 }).toBe(true);
    expect(requestLines(running.logs).map((line) => line.path)).not.toContain(path);
  });

  it("hands the paths it does not serve back to the parent: its 404", async () => {
    await running.http.get(`${way.base}/nothing-here`).set("Authorization", GOOD_AUTH).expect(404, { from: "parent 404" });
    await running.http.options(`${way.base}/resources/taken`).expect(404, { from: "parent 404" });
  });
});
