/** Every route of Variant A, Variant B and the current platform calls, with its success answer. */
import express from "express";
import { afterEach, describe, expect, it } from "vitest";
import request from "supertest";
import type { AddressInfo } from "node:net";
import { createProvider, MemoryStore } from "../../src/index.js";
import { AUTH, FORM, GOOD_AUTH, fakeResource, serve, start, stopAll } from "../../../../test/support/fake-provider.js";

afterEach(stopAll);

async function withInstance(name = "cache1") {
  const fake = fakeResource();
  const running = await start(fake.handlers);
  await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=${name}&team=core`).expect(201);
  return { fake, running, auth: GOOD_AUTH };
}

describe("Variant A", () => {
  it("GET /resources/plans lists plans as [{name, description}]", async () => {
    const { running, auth } = await withInstance();
    const res = await running.http.get("/resources/plans").set("Authorization", auth).expect(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual([
      { name: "small", description: "1 GiB" },
      { name: "large", description: "8 GiB" },
    ]);
  });

  it("POST /resources creates with name, plan and team: 201", async () => {
    const fake = fakeResource();
    const running = await start(fake.handlers);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&plan=small&team=core").expect(201);
    expect(fake.last("create")).toEqual({ instance: "db1", plan: "small", team: "core", tags: [], parameters: {} });
  });

  it("POST and DELETE /resources/:name/bind-app bind (201, env of strings) and unbind (200)", async () => {
    const { fake, running, auth } = await withInstance();
    const bind = await running.http
      .post("/resources/cache1/bind-app")
      .set("Authorization", auth)
      .type(FORM)
      .send("app-name=web&app-host=web.example.com&app-hosts=web.example.com&app-hosts=web2.example.com&app-internal-hosts=web.ns.svc")
      .expect(201);
    expect(bind.headers["content-type"]).toMatch(/^application\/json/);
    expect(bind.body).toEqual({ REDIS_HOST: "10.0.0.1", REDIS_PORT: "6379", REDIS_TLS: "true", REDIS_PASSWORD: "bind-secret-value" });
    expect(fake.last("bindApp")).toEqual({
      instance: "cache1",
      appName: "web",
      appHost: "web.example.com",
      appHosts: ["web.example.com", "web2.example.com"],
      appInternalHosts: ["web.ns.svc"],
      parameters: {},
      placement: { clusterAddresses: [] },
    });
    const unbind = await running.http
      .delete("/resources/cache1/bind-app")
      .set("Authorization", auth)
      .type(FORM)
      .send("app-name=web&app-host=web.example.com")
      .expect(200);
    expect(unbind.text).toBe("");
    expect(fake.last("unbindApp")).toEqual({
      instance: "cache1",
      appName: "web",
      appHost: "web.example.com",
      appHosts: ["web.example.com"],
      placement: { clusterAddresses: [] },
    });
  });

  it("POST and DELETE /resources/:name/bind bind a unit (201, {} when nothing to export) and unbind it (200)", async () => {
    const { fake, running, auth } = await withInstance();
    const bind = await running.http
      .post("/resources/cache1/bind")
      .set("Authorization", auth)
      .type(FORM)
      .send("app-name=web&app-host=web.example.com&unit-host=10.1.2.3")
      .expect(201);
    expect(bind.text).toBe("{}");
    expect(fake.last("bindUnit")).toEqual({ instance: "cache1", appName: "web", appHost: "web.example.com", unitHost: "10.1.2.3" });
    await running.http
      .delete("/resources/cache1/bind")
      .set("Authorization", auth)
      .type(FORM)
      .send("app-host=web.example.com&unit-host=10.1.2.3")
      .expect(200);
    expect(fake.last("unbindUnit")).toEqual({ instance: "cache1", appHost: "web.example.com", unitHost: "10.1.2.3" });
  });

  it("GET /resources/:name/status answers 204 when running", async () => {
    const { running, auth } = await withInstance();
    const res = await running.http.get("/resources/cache1/status").set("Authorization", auth).expect(204);
    expect(res.text).toBe("");
  });

  it("GET /resources/:name answers extra info as [{label, value}]", async () => {
    const { running, auth } = await withInstance();
    const res = await running.http.get("/resources/cache1").set("Authorization", auth).expect(200);
    expect(res.body).toEqual([{ label: "Plan", value: "default" }]);
  });

  it("DELETE /resources/:name destroys: 200, then 404 for the instance", async () => {
    const { running, auth } = await withInstance();
    await running.http.delete("/resources/cache1").set("Authorization", auth).type(FORM).send("user=ann&eventid=e1").expect(200);
    const gone = await running.http.get("/resources/cache1/status").set("Authorization", auth).expect(404);
    expect(gone.headers["content-type"]).toMatch(/^text\/plain/);
    expect(gone.text).toBe('Instance "cache1" not found.');
  });
});

describe("Variant B", () => {
  it("POST /resources with only a name creates: 201", async () => {
    const fake = fakeResource();
    const running = await start(fake.handlers);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=old1").expect(201);
    expect(fake.last("create")).toEqual({ instance: "old1", tags: [], parameters: {} });
  });

  it("POST /resources/:name with hostname binds the app known by that host: 201, env of strings", async () => {
    const { fake, running, auth } = await withInstance();
    const res = await running.http.post("/resources/cache1").set("Authorization", auth).type(FORM).send("hostname=web.example.com").expect(201);
    expect((res.body as Record<string, unknown>).REDIS_PORT).toBe("6379");
    expect(fake.last("bindApp")).toEqual({
      instance: "cache1",
      appHost: "web.example.com",
      appHosts: ["web.example.com"],
      appInternalHosts: [],
      parameters: {},
      placement: { clusterAddresses: [] },
    });
  });

  it("DELETE /resources/:name/hostname/:host unbinds: 200", async () => {
    const { fake, running, auth } = await withInstance();
    await running.http.delete("/resources/cache1/hostname/web.example.com").set("Authorization", auth).expect(200);
    expect(fake.last("unbindApp")).toEqual({
      instance: "cache1",
      appHost: "web.example.com",
      appHosts: ["web.example.com"],
      placement: { clusterAddresses: [] },
    });
  });
});

describe("current platform calls", () => {
  it("PUT /resources/:name updates with the full new state: 200", async () => {
    const { fake, running, auth } = await withInstance();
    await running.http
      .put("/resources/cache1")
      .set("Authorization", auth)
      .type(FORM)
      .send("description=cache&team=core&tags=a&tags=b&plan=large&user=ann&eventid=e9&parameters.maxmemory=2gb")
      .expect(200);
    expect(fake.last("update")).toEqual({
      instance: "cache1",
      description: "cache",
      team: "core",
      tags: ["a", "b"],
      plan: "large",
      parameters: { maxmemory: "2gb" },
    });
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "ann", eventId: "e9" });
  });

  it("PUT /resources/:name without an update handler answers 404 (never 405)", async () => {
    const fake = fakeResource({ update: undefined });
    const running = await start(fake.handlers);
    const res = await running.http.put("/resources/cache1").set("Authorization", GOOD_AUTH).type(FORM).send("team=core").expect(404);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/does not support/);
  });

  it("PUT and DELETE /resources/:name/binds/jobs/:job bind (201, env of strings) and unbind (200) a job", async () => {
    const { fake, running, auth } = await withInstance();
    const res = await running.http
      .put("/resources/cache1/binds/jobs/nightly")
      .set("Authorization", auth)
      .type(FORM)
      .send("job-name=nightly&user=ann&eventid=e2&job-pool-name=pool1&job-cluster-name=c1")
      .expect(201);
    expect(res.body).toEqual({ JOB_TOKEN: "job-secret-value" });
    expect(fake.last("bindJob")).toEqual({
      instance: "cache1",
      jobName: "nightly",
      parameters: {},
      placement: { poolName: "pool1", clusterName: "c1", clusterAddresses: [] },
    });
    await running.http.delete("/resources/cache1/binds/jobs/nightly").set("Authorization", auth).type(FORM).send("user=ann").expect(200);
    expect(fake.last("unbindJob")).toEqual({ instance: "cache1", jobName: "nightly", placement: { clusterAddresses: [] } });
  });
});

describe("status answers", () => {
  const cases = [
    { result: "pending" as const, status: 202, text: "" },
    { result: "running" as const, status: 204, text: "" },
    { result: { down: "Redis does not answer PING." }, status: 500, text: "Redis does not answer PING." },
    { result: { message: "Up, 3 of 3 replicas" }, status: 200, text: "Up, 3 of 3 replicas" },
  ];
  for (const { result, status, text } of cases) {
    it(`${JSON.stringify(result)} → ${status}`, async () => {
      const running = await start(fakeResource({ status: async () => result }).handlers);
      const res = await running.http.get("/resources/cache1/status").set("Authorization", GOOD_AUTH).expect(status);
      expect(res.text).toBe(text);
      if (text !== "") expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    });
  }
});

describe("optional handlers and empty results", () => {
  it("info returning nothing answers 404 plain text", async () => {
    const running = await start(fakeResource({ info: async () => undefined }).handlers);
    const res = await running.http.get("/resources/cache1").set("Authorization", GOOD_AUTH).expect(404);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
  });

  it("absent optional handlers answer 404 plain text on their routes", async () => {
    const { plans: _p, update: _u, bindUnit: _b, unbindUnit: _ub, bindJob: _j, unbindJob: _uj, status: _s, info: _i, ...required } =
      fakeResource().handlers;
    const running = await start(required);
    const calls = [
      running.http.get("/resources/plans"),
      running.http.put("/resources/x1"),
      running.http.post("/resources/x1/bind").type(FORM).send("unit-host=10.0.0.1"),
      running.http.delete("/resources/x1/bind").type(FORM).send("unit-host=10.0.0.1"),
      running.http.put("/resources/x1/binds/jobs/j1"),
      running.http.delete("/resources/x1/binds/jobs/j1"),
      running.http.get("/resources/x1/status"),
      running.http.get("/resources/x1"),
    ];
    for (const call of calls) {
      const res = await call.set("Authorization", GOOD_AUTH);
      expect(res.status).toBe(404);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      expect(res.text).toMatch(/^This provider does not support /);
    }
  });

  it("a bind handler returning nothing answers 201 with {} (never an empty body)", async () => {
    const running = await start(fakeResource({ bindApp: async () => undefined }).handlers);
    const res = await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web").expect(201);
    expect(res.text).toBe("{}");
  });

  it("a bind handler returning null answers {}", async () => {
    const running = await start(fakeResource({ bindApp: async () => null }).handlers);
    const res = await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web").expect(201);
    expect(res.text).toBe("{}");
  });
});

describe("routing", () => {
  it("GET /healthcheck answers WORKING without credentials", async () => {
    const running = await start(fakeResource().handlers);
    const res = await running.http.get("/healthcheck").expect(200);
    expect(res.text).toBe("WORKING");
  });

  it("unknown paths and methods answer 404 plain text, never 405", async () => {
    const running = await start(fakeResource().handlers);
    for (const [method, path] of [
      ["get", "/nothing"],
      ["patch", "/resources/cache1"],
      ["post", "/resources/cache1/status"],
      ["options", "/resources/cache1"],
      ["get", "/resources/cache1/bind-app"],
    ] as const) {
      const res = await running.http[method](path).set("Authorization", GOOD_AUTH);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    }
  });

  it("never redirects: a trailing slash is served or 404, never 3xx", async () => {
    const { running, auth } = await withInstance();
    const expected: Array<[string, number]> = [
      ["/resources/cache1/status/", 204],
      ["/resources/plans/", 200],
      ["/healthcheck/", 404],
      ["/resources/", 404],
    ];
    for (const [path, status] of expected) {
      const res = await running.http.get(path).set("Authorization", auth).redirects(0);
      expect(res.status, path).toBe(status);
      expect(res.headers.location).toBeUndefined();
    }
    const res = await running.http.get("/resources//status").set("Authorization", auth).redirects(0);
    expect(res.status).toBe(404);
  });

  it("matches paths case-sensitively: an instance named Plans is not the plan list", async () => {
    const fake = fakeResource();
    const running = await start(fake.handlers);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=Plans").expect(201);
    const info = await running.http.get("/resources/Plans").set("Authorization", GOOD_AUTH).expect(200);
    expect(info.body).toEqual([{ label: "Plan", value: "default" }]);
    expect(fake.last("info")).toEqual({ instance: "Plans" });
    await running.http.get("/resources/PLANS/status").set("Authorization", GOOD_AUTH).expect(404);
    await running.http.get("/Resources/plans").set("Authorization", GOOD_AUTH).expect(404);
    await running.http.get("/resources/cache1/Status").set("Authorization", GOOD_AUTH).expect(404);
    await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).expect(200);
  });

  it("`variants` limits the routes served", async () => {
    const running = await start(fakeResource().handlers, { variants: ["B"] });
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=c1").expect(201);
    await running.http.post("/resources/c1").set("Authorization", GOOD_AUTH).type(FORM).send("hostname=h.example.com").expect(201);
    await running.http.post("/resources/c1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web").expect(404);
    await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).expect(404);
    await running.http.put("/resources/c1").set("Authorization", GOOD_AUTH).expect(404);

    const onlyA = await start(fakeResource().handlers, { variants: ["A"] });
    await onlyA.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=c1").expect(201);
    await onlyA.http.post("/resources/c1").set("Authorization", GOOD_AUTH).type(FORM).send("hostname=h.example.com").expect(404);
    await onlyA.http.post("/resources/c1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web").expect(201);
  });

  it("can be mounted under a prefix of another Express app", async () => {
    const fake = fakeResource();
    const provider = createProvider(fake.handlers, { auth: AUTH, registry: false, logger: (await import("pino")).pino({ level: "silent" }) });
    const outer = express();
    outer.use("/redis", provider);
    const server = outer.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const http = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await http.post("/redis/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=c1").expect(201);
      await http.get("/redis/resources/c1/status").set("Authorization", GOOD_AUTH).expect(204);
      await http.get("/redis/healthcheck").expect(200, "WORKING");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await provider.close();
    }
  });
  it("mounted in another app, hands what it does not serve back to that app: its later routes and its 404", async () => {
    const logger = (await import("pino")).pino({ level: "silent" });
    const atRoot = createProvider(fakeResource().handlers, { auth: AUTH, registry: false, logger });
    const prefixed = createProvider(fakeResource().handlers, { auth: AUTH, registry: false, logger });
    prefixed.get("/boom", () => {
      throw new Error("a route added to the provider failed");
    });
    const outer = express();
    outer.use("/redis", prefixed);
    outer.use(atRoot);
    outer.get("/version", (_req, res) => void res.json({ version: "1.2.3" }));
    outer.use((_req: express.Request, res: express.Response) => void res.status(404).json({ from: "parent 404" }));
    outer.use((error: Error, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(500).json({ from: "parent errors", message: error.message }));
    const server = outer.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const http = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await http.get("/version").set("Authorization", GOOD_AUTH).expect(200, { version: "1.2.3" });
      await http.get("/nothing-here").set("Authorization", GOOD_AUTH).expect(404, { from: "parent 404" });
      await http.get("/redis/nothing-here").set("Authorization", GOOD_AUTH).expect(404, { from: "parent 404" });
      // A route added on the provider is its own: the provider answers its error, not the parent.
      const failed = await http.get("/redis/boom").set("Authorization", GOOD_AUTH).expect(500).expect("Content-Type", /^text\/plain/);
      expect(failed.text).toMatch(/^The provider failed to handle this call \(request id [\w-]+\)/);
      await http.post("/redis/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=c1").expect(201);
      await http.get("/resources/plans").set("Authorization", GOOD_AUTH).expect(200);
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await Promise.all([atRoot.close(), prefixed.close()]);
    }
  });

  it("as the server itself, answers its own 404 after the routes added to it, and its own error answer", async () => {
    const provider = createProvider(fakeResource().handlers, { auth: AUTH, registry: false, logger: (await import("pino")).pino({ level: "silent" }) });
    provider.get("/added", (_req, res) => void res.json({ added: true }));
    provider.get("/boom", () => {
      throw new Error("a route added to the provider failed");
    });
    const server = await serve(provider);
    try {
      const http = request(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      await http.get("/added").set("Authorization", GOOD_AUTH).expect(200, { added: true });
      await http.get("/nothing-here").set("Authorization", GOOD_AUTH).expect(404, "This provider has no route for GET /nothing-here.");
      const failed = await http.get("/boom").set("Authorization", GOOD_AUTH).expect(500);
      expect(failed.text).not.toContain("a route added to the provider failed");
    } finally {
      await new Promise((resolve) => server.close(resolve));
      await provider.close();
    }
  });
});

describe("with the registry on (a MemoryStore)", () => {
  it("serves a create → status → bind → unbind → destroy flow", async () => {
    const fake = fakeResource();
    const running = await start(fake.handlers, { registry: { store: new MemoryStore() } });
    const auth = GOOD_AUTH;
    await running.http.post("/resources").set("Authorization", auth).type(FORM).send("name=reg1&team=core").expect(201);
    await running.http.get("/resources/reg1/status").set("Authorization", auth).expect(204);
    const bind = await running.http.post("/resources/reg1/bind-app").set("Authorization", auth).type(FORM).send("app-name=web&app-host=web.example.com").expect(201);
    expect((bind.body as Record<string, unknown>).REDIS_PORT).toBe("6379");
    await running.http.delete("/resources/reg1/bind-app").set("Authorization", auth).type(FORM).send("app-name=web").expect(200);
    await running.http.delete("/resources/reg1").set("Authorization", auth).expect(200);
    await running.http.get("/resources/reg1/status").set("Authorization", auth).expect(404);
  });
});
