/**
 * The two ways in give the same answers byte for byte: `provider.listen()` (the provider's routes
 * straight from node:http) and the Express app (`http.createServer(provider)`, as when mounted).
 * Two providers with the same handlers and state get the same raw requests, one per way in; the
 * raw answers (status line, headers in order, body) must be equal but for the Date header.
 */
import { once } from "node:events";
import { connect } from "node:net";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProvider, NotFoundError, type Provider } from "../../src/index.js";
import { pino } from "pino";
import { AUTH, FORM, GOOD_AUTH, basic, fakeResource, serve, type Serving } from "./helpers.js";

/** Sends `raw` on a fresh connection and returns everything the server wrote until it closed. */
async function exchange(server: Server, raw: string): Promise<string> {
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  socket.write(raw); // not end(): a half-closed connection is dropped before a slow answer
  await once(socket, "close");
  // The one header that differs between two answers given a moment apart.
  return Buffer.concat(chunks).toString("latin1").replace(/\r\nDate: [^\r]*/, "\r\nDate: (now)");
}

interface Request {
  what: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

/** Every route, and every way a call is refused or fails. Run in order: some depend on earlier ones. */
const CALLS: Request[] = [
  { what: "healthcheck", method: "GET", path: "/healthcheck" },
  { what: "healthcheck, every component", method: "GET", path: "/healthcheck?check=all" },
  { what: "healthcheck with a trailing slash (guarded, unknown)", method: "GET", path: "/healthcheck/" },
  { what: "plans", method: "GET", path: "/resources/plans" },
  { what: "create", method: "POST", path: "/resources", headers: { "content-type": FORM }, body: "name=cache1&plan=small&team=core&tags=a&tags=b&parameters.tls.enabled=true" },
  { what: "create, JSON", method: "POST", path: "/resources", headers: { "content-type": "application/json" }, body: '{"name":"cache2","parameters":{"x":1}}' },
  { what: "create again: 409", method: "POST", path: "/resources", headers: { "content-type": FORM }, body: "name=cache1" },
  { what: "status", method: "GET", path: "/resources/cache1/status" },
  { what: "status, HEAD", method: "HEAD", path: "/resources/cache1/status" },
  { what: "status with a query and a trailing slash", method: "GET", path: "/resources/cache1/status/?x=1" },
  { what: "status of an unknown instance: 404", method: "GET", path: "/resources/nope/status" },
  { what: "info", method: "GET", path: "/resources/cache1" },
  { what: "update", method: "PUT", path: "/resources/cache1", headers: { "content-type": FORM }, body: "plan=large" },
  { what: "bind-app", method: "POST", path: "/resources/cache1/bind-app", headers: { "content-type": FORM, "x-tsuru-user": "ann", "x-tsuru-eventid": "e1" }, body: "app-name=web&app-host=web.example.com&app-hosts=a.example.com&app-hosts=b.example.com" },
  { what: "bind-app, JSON", method: "POST", path: "/resources/cache1/bind-app", headers: { "content-type": "application/json" }, body: '{"appName":"web","appHosts":["a.example.com"]}' },
  { what: "unbind-app", method: "DELETE", path: "/resources/cache1/bind-app", headers: { "content-type": FORM }, body: "app-name=web" },
  { what: "bind unit", method: "POST", path: "/resources/cache1/bind", headers: { "content-type": FORM }, body: "app-name=web&app-host=web.example.com&unit-host=10.0.0.2" },
  { what: "unbind unit", method: "DELETE", path: "/resources/cache1/bind", headers: { "content-type": FORM }, body: "app-name=web&app-host=web.example.com&unit-host=10.0.0.2" },
  { what: "bind job", method: "PUT", path: "/resources/cache1/binds/jobs/nightly", headers: { "content-type": FORM }, body: "job-name=nightly" },
  { what: "unbind job", method: "DELETE", path: "/resources/cache1/binds/jobs/nightly" },
  { what: "bind hostname (Variant B)", method: "POST", path: "/resources/cache1", headers: { "content-type": FORM }, body: "hostname=h.example.com" },
  { what: "unbind hostname (Variant B)", method: "DELETE", path: "/resources/cache1/hostname/h.example.com" },
  { what: "a route the user added", method: "GET", path: "/custom" },
  { what: "unknown route: 404", method: "GET", path: "/nowhere?x=1" },
  { what: "unknown method: 404", method: "PATCH", path: "/resources/cache1" },
  { what: "no credentials: 401", method: "GET", path: "/resources/cache1/status", headers: { authorization: "" } },
  { what: "wrong password: 401", method: "GET", path: "/resources/cache1/status", headers: { authorization: basic(AUTH.usernames[0]!, "wrong") } },
  { what: "the service id, lower-case scheme (full check)", method: "GET", path: "/resources/cache1/status", headers: { authorization: basic(AUTH.usernames[1]!, AUTH.password).replace("Basic", "basic") } },
  { what: "missing field: 400", method: "POST", path: "/resources/cache1/bind-app", headers: { "content-type": FORM }, body: "app-host=x" },
  { what: "bad instance name in the path: 400", method: "GET", path: "/resources/..%2Fetc/status" },
  { what: "undecodable path: 400", method: "GET", path: "/resources/%ZZ/status" },
  { what: "a path Express reads through url.parse", method: "GET", path: "/resources/cache1/status#frag" },
  { what: "malformed JSON: 400", method: "POST", path: "/resources", headers: { "content-type": "application/json" }, body: "{not json" },
  { what: "another Content-Type: 415", method: "POST", path: "/resources", headers: { "content-type": "text/plain" }, body: "name=x" },
  { what: "another charset: 415", method: "POST", path: "/resources", headers: { "content-type": `${FORM}; charset=latin1` }, body: "name=x" },
  { what: "compressed: 415", method: "POST", path: "/resources", headers: { "content-type": FORM, "content-encoding": "gzip" }, body: "name=x" },
  { what: "too large: 413", method: "POST", path: "/resources", headers: { "content-type": FORM }, body: `name=big&description=${"x".repeat(3000)}` },
  { what: "too many form fields: 413", method: "POST", path: "/resources", headers: { "content-type": FORM }, body: `name=many&${"tags=t&".repeat(20)}` },
  { what: "parameters nested too deep: 400", method: "POST", path: "/resources", headers: { "content-type": FORM }, body: `name=deep&parameters.${"a.".repeat(40)}b=1` },
  { what: "a handler failure: 500", method: "GET", path: "/resources/broken" },
  { what: "a handler past the timeout: 500", method: "GET", path: "/resources/slow/status" },
  { what: "destroy", method: "DELETE", path: "/resources/cache1" },
];

function rawRequest({ method, path, headers = {}, body }: Request, index: number): string {
  const all: Record<string, string> = {
    host: "provider.test",
    authorization: GOOD_AUTH,
    "x-request-id": `same-bytes-${index}`,
    connection: "close",
    ...headers,
    ...(body === undefined ? {} : { "content-length": String(Buffer.byteLength(body)) }),
  };
  const lines = Object.entries(all).filter(([, value]) => value !== "").map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n${body ?? ""}`;
}

function providerServed(): Provider {
  const fake = fakeResource({
    info: async (req) => {
      if (req.instance === "broken") throw new Error("the resource is on fire");
      return [{ label: "Plan", value: "small" }];
    },
    status: async (req, ctx): Promise<"running"> => {
      if (req.instance === "nope") throw new NotFoundError(`Instance "${req.instance}" not found.`);
      if (req.instance !== "slow") return "running";
      await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
      return "running";
    },
  });
  const provider = createProvider(fake.handlers, {
    auth: AUTH,
    registry: false,
    logger: pino({ level: "silent" }),
    handlerTimeoutMs: 300,
    bodyLimitBytes: 2048,
    formFieldLimit: 10,
  });
  provider.get("/custom", (_req, res) => void res.type("text/plain").send("the user's own route"));
  return provider;
}

const ways: Serving[] = ["direct", "express"];
const served = new Map<Serving, { provider: Provider; server: Server }>();

beforeAll(async () => {
  for (const way of ways) {
    const provider = providerServed();
    served.set(way, { provider, server: await serve(provider, way) });
  }
});

afterAll(async () => {
  for (const { provider, server } of served.values()) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await provider.close();
  }
});

async function bothWays(raw: string): Promise<[string, string]> {
  const [direct, viaExpress] = ways.map((way) => served.get(way)!.server);
  return [await exchange(direct!, raw), await exchange(viaExpress!, raw)];
}

describe("provider.listen() and the Express app answer byte for byte alike", () => {
  it.each(CALLS.map((call, index) => [call.what, call, index] as const))("%s", async (_what, call, index) => {
    const [direct, viaExpress] = await bothWays(rawRequest(call, index));
    expect(direct).toMatch(/^HTTP\/1\.1 \d{3} /);
    expect(direct).toBe(viaExpress);
  });

  it("a provider that is closing answers 503 alike", async () => {
    await Promise.all([...served.values()].map(({ provider }) => provider.close()));
    const [direct, viaExpress] = await bothWays(rawRequest({ what: "closing", method: "GET", path: "/resources/cache1/status" }, 999));
    expect(direct).toMatch(/^HTTP\/1\.1 503 /);
    expect(direct).toBe(viaExpress);
  });
});

describe("provider.listen()", () => {
  it("answers the provider's routes without Express, and hands everything else to it", async () => {
    const provider = providerServed();
    const server = await serve(provider, "direct");
    // The Express app behind the provider (src/provider.ts reaches it through the prototype).
    const routed = Object.getPrototypeOf(provider) as { handle: (...args: unknown[]) => void };
    const expressHandle = routed.handle;
    const throughExpress: string[] = [];
    routed.handle = (...args: unknown[]) => {
      throughExpress.push((args[0] as { url: string }).url);
      expressHandle.apply(routed, args);
    };
    try {
      for (const [index, call] of CALLS.entries()) await exchange(server, rawRequest(call, index));
      expect(throughExpress).toEqual([
        "/healthcheck/",
        "/custom",
        "/nowhere?x=1",
        "/resources/cache1", // PATCH
        "/resources/cache1/status", // no credentials
        "/resources/cache1/status", // wrong password
        "/resources/cache1/status", // lower-case scheme
        "/resources/cache1/status#frag",
      ]);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await provider.close();
    }
  });
});
