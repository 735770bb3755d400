/**
 * What the kit puts on the wire is what the platform sends (docs/contract.md, "Transport"):
 * a raw node:http server records every request of a run.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { runConformance } from "../../src/conformance/index.js";
import { CREDENTIALS } from "./helpers.js";

interface Recorded {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

let recorded: Recorded[] = [];
let server: http.Server;
let url: string;

/** Answers like a lenient provider so the run goes through every call: ready at once, a fresh password per app bind, `{}` for the rest. */
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      recorded.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body });
      if (req.url?.endsWith("/status")) return void res.writeHead(204).end();
      if (req.method === "POST" && req.url?.endsWith("/bind-app")) {
        return void res.writeHead(201, { "Content-Type": "application/json" }).end(JSON.stringify({ WIRE_PASSWORD: randomBytes(9).toString("hex") }));
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end(req.url === "/resources/plans" ? "[]" : "{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  recorded = [];
});

const validAuth = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
const authenticated = () => recorded.filter((request) => request.headers.authorization === validAuth);
function find(method: string, path: RegExp): Recorded {
  const request = authenticated().find((candidate) => candidate.method === method && path.test(candidate.path));
  if (!request) throw new Error(`The kit sent no ${method} matching ${path}.`);
  return request;
}
const INSTANCE = "pkc-[0-9a-f]{10}-conformance";

describe("the requests the kit sends", () => {
  it("carry the platform's headers on every call, the whole password (colons included), and no trailing slash", async () => {
    await runConformance({ url, ...CREDENTIALS });
    expect(recorded.length).toBeGreaterThan(30);
    for (const request of recorded) {
      expect(request.headers.accept).toBe("application/json");
      expect(request.headers.connection).toBe("close");
      expect(request.headers["user-agent"]).toBe("Go-http-client/1.1");
      // The form type on every call, bodiless GETs included.
      expect(request.headers["content-type"]).toBe("application/x-www-form-urlencoded");
      expect(request.path.endsWith("/")).toBe(false);
    }
    const requestIds = recorded.map((request) => request.headers["x-request-id"]);
    expect(new Set(requestIds).size).toBe(recorded.length);
    expect(authenticated().length).toBeGreaterThan(20);
  });

  it("send create, bind-app, unbind-app and destroy form bodies with repeated keys, flattened parameters, user and eventid", async () => {
    await runConformance({ url, ...CREDENTIALS, plan: "small" });
    const create = find("POST", /^\/resources$/);
    const form = new URLSearchParams(create.body);
    expect(form.get("name")).toMatch(new RegExp(`^${INSTANCE}$`));
    expect(form.get("name")).toMatch(/^[A-Za-z][-a-zA-Z0-9_]+$/);
    expect(form.get("plan")).toBe("small");
    expect(form.get("team")).toBe("pkc-team");
    expect(form.getAll("tags")).toEqual(["pkc", "conformance"]);
    expect(form.get("parameters.size")).toBe("2");
    expect(form.get("parameters.tls.enabled")).toBe("true");
    expect(form.get("eventid")).toBe(create.headers["x-tsuru-eventid"]);
    expect(form.get("user")).toBe(create.headers["x-tsuru-user"]);

    const bind = find("POST", new RegExp(`^/resources/${INSTANCE}/bind-app$`));
    const bindForm = new URLSearchParams(bind.body);
    expect(bindForm.get("app-name")).toMatch(/-app$/);
    expect(bindForm.getAll("app-hosts")).toHaveLength(2);
    expect(bindForm.get("app-host")).toBe(bindForm.getAll("app-hosts")[0]);
    expect(bindForm.getAll("app-cluster-addresses")).toHaveLength(2);
    // The app's placement is in the fields; X-Tsuru-* headers would say where the instance lives, and it lives in no pool.
    expect(bind.rawHeaders.filter((name) => name.startsWith("X-Tsuru-Pool") || name.startsWith("X-Tsuru-Cluster"))).toEqual([]);

    const unbind = find("DELETE", new RegExp(`^/resources/${INSTANCE}/bind-app$`));
    const unbindForm = new URLSearchParams(unbind.body);
    expect([...unbindForm.keys()].sort()).toEqual(["app-host", "app-hosts", "app-hosts", "app-name", "eventid", "user"]);

    const destroy = find("DELETE", new RegExp(`^/resources/${INSTANCE}$`));
    expect([...new URLSearchParams(destroy.body).keys()].sort()).toEqual(["eventid", "user"]);
    expect(destroy.headers["content-length"]).toBe(String(Buffer.byteLength(destroy.body)));
  });

  it("send the camelCase JSON bodies of platform 1.30+ when asked, and keep the legacy unit binds form encoded", async () => {
    await runConformance({ url, ...CREDENTIALS, encoding: "json" });
    const create = find("POST", /^\/resources$/);
    expect(create.headers["content-type"]).toBe("application/json");
    expect(JSON.parse(create.body)).toEqual({
      name: expect.stringMatching(new RegExp(`^${INSTANCE}$`)),
      team: "pkc-team",
      tags: ["pkc", "conformance"],
      description: "conformance check",
      user: create.headers["x-tsuru-user"],
      eventID: create.headers["x-tsuru-eventid"],
      parameters: { size: "2", tls: { enabled: "true" } },
    });
    const bind = JSON.parse(find("POST", new RegExp(`^/resources/${INSTANCE}/bind-app$`)).body) as Record<string, unknown>;
    expect(bind).toMatchObject({ appName: expect.stringMatching(/-app$/), appHosts: [expect.any(String), expect.any(String)] });
    expect(bind).not.toHaveProperty("appHost");
    const job = JSON.parse(find("PUT", /\/binds\/jobs\//).body) as Record<string, unknown>;
    expect(job).toMatchObject({ jobName: expect.stringMatching(/-job$/), jobPoolName: "pkc-pool", jobClusterName: "pkc-cluster" });
    const unit = find("POST", new RegExp(`^/resources/${INSTANCE}/bind$`));
    expect(unit.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    expect(new URLSearchParams(unit.body).get("unit-host")).toBe("10.0.0.10");
  });

  it("swap two apps' addresses as the platform does: the same app names, each with the other's app-host and app-hosts", async () => {
    const report = await runConformance({ url, ...CREDENTIALS });
    expect(report.results.find((result) => result.id === "isolation.swap")?.outcome).toBe("pass");
    const app = `${report.instance}-app`;
    const other = `${report.instance}-app2`;
    const appCalls = (method: string, name: string) =>
      authenticated()
        .filter((request) => request.method === method && request.path === `/resources/${report.instance}/bind-app`)
        .map((request) => new URLSearchParams(request.body))
        .filter((form) => form.get("app-name") === name)
        .map((form) => [form.get("app-host"), ...form.getAll("app-hosts"), ...form.getAll("app-internal-hosts")]);
    const addresses = (name: string) => [`${name}.example.com`, `${name}.example.com`, `${name}.example.org`, `${name}.pkc.svc.cluster.local`];
    // Bound at their own addresses, then unbound, bound again and unbound at each other's.
    expect(appCalls("POST", app)).toContainEqual(addresses(app));
    expect(appCalls("POST", app)).toContainEqual(addresses(other));
    expect(appCalls("POST", other)).toEqual([addresses(other), addresses(app)]);
    // Three unbinds at the first app's address; then, before the instance is destroyed, the kit
    // undoes its first bind too, at its own address: a provider keyed by address holds both.
    expect(appCalls("DELETE", other).map((hosts) => hosts.slice(0, 3))).toEqual([...Array(3).fill(addresses(app).slice(0, 3)), addresses(other).slice(0, 3)]);
  });

  it("send Variant B's calls: create with the name only, bind and unbind by hostname", async () => {
    await runConformance({ url, ...CREDENTIALS, variant: "B" });
    expect([...new URLSearchParams(find("POST", /^\/resources$/).body).keys()]).toEqual(["name"]);
    const bind = find("POST", new RegExp(`^/resources/${INSTANCE}$`));
    const hostname = new URLSearchParams(bind.body).get("hostname");
    expect(hostname).toMatch(/\.example\.com$/);
    find("DELETE", new RegExp(`^/resources/${INSTANCE}/hostname/${hostname!.replace(/\./g, "\\.")}$`));
  });
});
