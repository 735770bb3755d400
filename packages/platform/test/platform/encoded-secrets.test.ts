/**
 * A provider or broker that repeats the password the platform sent, in any encoding a program
 * writes it in (URL-encoded as a connection string or a form holds it, base64 as a Basic header
 * holds it, JSON-escaped): the proxy's answer, the messages users get and the call timeline show
 * none of them. Real HTTP on loopback: a plain provider and a plain broker answering with them.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { startTestPlatform, type TestPlatform } from "./helpers.js";

/** Every character that encodes differently in each form: `/`, `+`, `?`, a space, `%`. */
const PASSWORD = "pa/ss+word? 100%";
const USER = "enc-user";

/** The password's forms a program may write; each must be redacted wherever the platform shows it. */
const FORMS = {
  raw: PASSWORD,
  "percent (encodeURIComponent)": encodeURIComponent(PASSWORD),
  "percent, lower-case hex": encodeURIComponent(PASSWORD).replace(/%[0-9A-F]{2}/g, (escape) => escape.toLowerCase()),
  "form (+ for space)": new URLSearchParams({ p: PASSWORD }).toString().slice(2),
  "URL user info": `redis://user:${encodeURIComponent(PASSWORD)}@cache.example:6379`,
  "base64 (Basic user:password)": Buffer.from(`${USER}:${PASSWORD}`).toString("base64"),
  "base64 of the password": Buffer.from(PASSWORD).toString("base64"),
  "JSON-escaped, slashes too": JSON.stringify(PASSWORD).slice(1, -1).replaceAll("/", "\\/"),
};

/** What must never show: each form (the URL's password part, for the URL). */
function shownForms(text: string): string[] {
  return Object.entries(FORMS)
    .filter(([name, form]) => text.includes(name === "URL user info" ? encodeURIComponent(PASSWORD) : form))
    .map(([name]) => name);
}

const echo = Object.entries(FORMS).map(([name, form]) => `${name}: ${form}`).join("\n");

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => handler(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe("a password echoed in any encoding", () => {
  let t: TestPlatform;
  let provider: Awaited<ReturnType<typeof listen>>;
  let broker: Awaited<ReturnType<typeof listen>>;
  const planId = randomUUID();

  beforeAll(async () => {
    provider = await listen((req, res) => {
      if (req.method === "POST" && req.url === "/resources") return void res.writeHead(201).end();
      if (req.url?.startsWith("/resources/kv1/echo")) return void res.writeHead(400, { "Content-Type": "text/plain" }).end(echo);
      if (req.url === "/resources/kv1/bind-app") return void res.writeHead(500, { "Content-Type": "text/plain" }).end(echo);
      res.writeHead(200, { "Content-Type": "application/json" }).end("{}");
    });
    broker = await listen((req, res) => {
      const json = (status: number, body: unknown) => res.writeHead(status, { "Content-Type": "application/json" }).end(JSON.stringify(body));
      if (req.url === "/v2/catalog") return json(200, { services: [{ id: randomUUID(), name: "svc", description: "A service.", bindable: true, plans: [{ id: planId, name: "small", description: "A plan." }] }] });
      return json(500, { error: "LoginFailed", description: echo });
    });
    t = await startTestPlatform("memory");
    await t.admin.ok(t.admin.post("/services", { text: stringify({ id: "kv", username: USER, password: PASSWORD, endpoint: { production: provider.url } }) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
    const auth = { BasicAuthConfig: { Username: USER, Password: PASSWORD } };
    await t.admin.ok(t.admin.post("/brokers", { json: { Name: "enc", URL: broker.url, Config: { AuthConfig: auth } } }), 201);
  });
  afterAll(async () => {
    await t?.stop();
    await provider?.close();
    await broker?.close();
  });

  it("is redacted from the proxy's answer", async () => {
    const answer = await t.admin.get("/1.20/services/kv/resources/kv1/echo");
    expect(answer.status).toBe(400);
    expect(answer.text).toContain("<redacted");
    expect(shownForms(answer.text)).toEqual([]);
  });

  it("is redacted from a provider's error and a broker's error the user is shown", async () => {
    const bound = await t.admin.put("/services/instances/kv1/web");
    expect(bound.status).toBe(500);
    expect(bound.text).toContain("<redacted");
    expect(shownForms(bound.text)).toEqual([]);

    const brokered = await t.admin.post("/services/instances", { json: { name: "b1", service_name: "enc::svc", plan: "small" } });
    expect(brokered.status).toBe(500);
    expect(brokered.text).toContain("LoginFailed");
    expect(shownForms(brokered.text), brokered.text).toEqual([]);
  });

  it("is redacted from the call timeline", async () => {
    const timeline = (await t.admin.ok(t.admin.get("/provider-calls"))).text;
    expect(timeline).toContain("/echo");
    expect(timeline).toContain("/v2/service_instances/");
    expect(shownForms(timeline)).toEqual([]);
  });
});
