/** Both body encodings, the platform's field conventions, and every kind of bad input. */
import { request as httpRequest } from "node:http";
import { gzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { COSTLY_BODIES } from "./costly-bodies.js";
import { FORM, GOOD_AUTH, fakeResource, start, stopAll, type Running } from "../../../../test/support/fake-provider.js";

afterEach(stopAll);

/** The fake resource with instances `cache1` and `c1` already there. */
function seeded() {
  const fake = fakeResource();
  for (const name of ["cache1", "c1"]) fake.instances.set(name, {});
  return fake;
}

/** A request with the path sent byte for byte (no client-side normalising of `..` or `%2F`). */
function rawRequest(running: Running, method: string, path: string, body: string | Buffer = "", headers: Record<string, string> = {}) {
  return new Promise<{ status: number; text: string; headers: Record<string, unknown> }>((resolve, reject) => {
    const { port } = new URL(running.url);
    const req = httpRequest(
      { host: "127.0.0.1", port, method, path, headers: { authorization: GOOD_AUTH, "content-type": FORM, ...headers } },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

const BIND_FORM = [
  "app-name=web",
  "app-host=web.example.com",
  "app-hosts=web.example.com",
  "app-hosts=web-2.example.com",
  "app-internal-hosts=web.ns.svc.cluster.local",
  "app-pool-name=pool-a",
  "app-pool-provisioner=kubernetes",
  "app-cluster-name=cluster-1",
  "app-cluster-provisioner=kubernetes",
  "app-cluster-addresses=https://10.0.0.1",
  "app-cluster-addresses=https://10.0.0.2",
  "user=ann@example.com",
  "eventid=ev-123",
  "parameters.size=2",
  "parameters.tls.enabled=true",
  "parameters.tls.ciphers=a",
  "parameters.tls.ciphers=b",
].join("&");

const BIND_JSON = {
  appName: "web",
  appHosts: ["web.example.com", "web-2.example.com"],
  appInternalHosts: ["web.ns.svc.cluster.local"],
  appPoolName: "pool-a",
  appPoolProvisioner: "kubernetes",
  appClusterName: "cluster-1",
  appClusterProvisioner: "kubernetes",
  appClusterAddresses: ["https://10.0.0.1", "https://10.0.0.2"],
  user: "ann@example.com",
  eventID: "ev-123",
  parameters: { size: 2, tls: { enabled: true, ciphers: ["a", "b"] } },
};

const BIND_REQUEST = {
  instance: "cache1",
  appName: "web",
  appHost: "web.example.com",
  appHosts: ["web.example.com", "web-2.example.com"],
  appInternalHosts: ["web.ns.svc.cluster.local"],
  parameters: { size: "2", tls: { enabled: "true", ciphers: ["a", "b"] } },
  placement: {
    poolName: "pool-a",
    poolProvisioner: "kubernetes",
    clusterName: "cluster-1",
    clusterProvisioner: "kubernetes",
    clusterAddresses: ["https://10.0.0.1", "https://10.0.0.2"],
  },
};

describe("encodings", () => {
  it("form and camelCase JSON bodies give the same typed bind-app request", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send(BIND_FORM).expect(201);
    expect(fake.last("bindApp")).toEqual(BIND_REQUEST);
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "ann@example.com", eventId: "ev-123" });

    await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).send(BIND_JSON).expect(201);
    expect(fake.last("bindApp")).toEqual(BIND_REQUEST);
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "ann@example.com", eventId: "ev-123" });
  });

  it("create: form with repeated tags and nested parameters equals its JSON form", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const expected = {
      instance: "db1",
      team: "core",
      plan: "small",
      description: "main db",
      tags: ["a", "b"],
      parameters: { version: "7", tls: { enabled: "true" } },
    };
    await running.http
      .post("/resources")
      .set("Authorization", GOOD_AUTH)
      .type(FORM)
      .send("name=db1&team=core&plan=small&description=main+db&tags=a&tags=b&user=ann&eventid=e1&parameters.version=7&parameters.tls.enabled=true")
      .expect(201);
    expect(fake.last("create")).toEqual(expected);
    await running.http
      .post("/resources")
      .set("Authorization", GOOD_AUTH)
      .send({ name: "db2", team: "core", plan: "small", description: "main db", tags: ["a", "b"], user: "ann", eventID: "e1", parameters: { version: 7, tls: { enabled: true } } })
      .expect(201);
    expect(fake.last("create")).toEqual({ ...expected, instance: "db2" });
  });

  it("a single tag is a one-element list; empty optional fields are absent", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&tags=solo&plan=&description=").expect(201);
    expect(fake.last("create")).toEqual({ instance: "db1", tags: ["solo"], parameters: {} });
  });

  it("DELETE bodies are read (unbind fields, user and event id)", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    await running.http
      .delete("/resources/cache1/bind-app")
      .set("Authorization", GOOD_AUTH)
      .type(FORM)
      .send("app-name=web&app-hosts=h1.example.com&app-hosts=h2.example.com&user=bob&eventid=e5")
      .expect(200);
    expect(fake.last("unbindApp")).toEqual({
      instance: "cache1",
      appName: "web",
      appHost: "h1.example.com",
      appHosts: ["h1.example.com", "h2.example.com"],
      placement: { clusterAddresses: [] },
    });
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "bob", eventId: "e5" });
    await running.http.delete("/resources/cache1").set("Authorization", GOOD_AUTH).send({ user: "carol", eventID: "e6" }).expect(200);
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "carol", eventId: "e6" });
  });

  it("bodiless calls with a form Content-Type work, with or without Content-Length: 0", async () => {
    const running = await start(seeded().handlers);
    expect((await rawRequest(running, "GET", "/resources/cache1/status")).status).toBe(204);
    expect((await rawRequest(running, "DELETE", "/resources/cache1", "", { "content-length": "0" })).status).toBe(200);
    expect((await rawRequest(running, "DELETE", "/resources/c1/hostname/web.example.com", "", { "content-type": "text/plain", "content-length": "0" })).status).toBe(200);
  });

  it("the X-Tsuru-Pool-*/Cluster-* headers fill placement when the body has none; body fields win", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const headers = {
      "X-Tsuru-Pool-Name": "hdr-pool",
      "X-Tsuru-Pool-Provisioner": "kubernetes",
      "X-Tsuru-Cluster-Name": "hdr-cluster",
      "X-Tsuru-Cluster-Provisioner": "kubernetes",
      "X-Tsuru-User": "hdr-user",
      "X-Tsuru-Eventid": "hdr-event",
    };
    const { port } = new URL(running.url);
    await new Promise<void>((resolve, reject) => {
      const req = httpRequest(
        {
          host: "127.0.0.1",
          port,
          method: "PUT",
          path: "/resources/cache1/binds/jobs/job1",
          headers: {
            Authorization: GOOD_AUTH,
            "Content-Type": FORM,
            ...headers,
            // An array is sent as one header line per address.
            "X-Tsuru-Cluster-Addresses": ["https://a.example.com", "https://b.example.com"],
          },
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => (text += chunk.toString()));
          res.on("end", () => (res.statusCode === 201 ? resolve() : reject(new Error(`status ${res.statusCode}: ${text}`))));
        },
      );
      req.on("error", reject);
      req.end("user=body-user");
    });
    expect(fake.last("bindJob")).toEqual({
      instance: "cache1",
      jobName: "job1",
      parameters: {},
      placement: {
        poolName: "hdr-pool",
        poolProvisioner: "kubernetes",
        clusterName: "hdr-cluster",
        clusterProvisioner: "kubernetes",
        clusterAddresses: ["https://a.example.com", "https://b.example.com"],
      },
    });
    // Headers name the caller over the body.
    expect(fake.received.at(-1)?.context).toMatchObject({ user: "hdr-user", eventId: "hdr-event" });

    await running.http
      .post("/resources/cache1/bind-app")
      .set("Authorization", GOOD_AUTH)
      .set(headers)
      .type(FORM)
      .send("app-name=web&app-pool-name=body-pool")
      .expect(201);
    expect((fake.last("bindApp") as { placement: unknown }).placement).toMatchObject({ poolName: "body-pool", clusterName: "hdr-cluster" });
  });
});

describe("bad input", () => {
  async function expect400(running: Running, send: () => Promise<{ status: number; text: string; headers: Record<string, unknown> }>, message: RegExp) {
    const res = await send();
    expect(res.status).toBe(400);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.text).toMatch(message);
  }

  it("a missing required field answers 400 naming it, as the caller spelled it", async () => {
    const running = await start(seeded().handlers);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("team=core"), /^Field "name" is required\.$/);
    await expect400(running, () => running.http.post("/resources/c1/bind").set("Authorization", GOOD_AUTH).type(FORM).send("app-host=a.example.com"), /^Field "unit-host" is required/);
    await expect400(running, () => running.http.post("/resources/c1/bind").set("Authorization", GOOD_AUTH).send({ appHost: "a.example.com" }), /^Field "unitHost" is required/);
    await expect400(running, () => running.http.post("/resources/c1").set("Authorization", GOOD_AUTH).type(FORM).send(""), /^Field "hostname" is required/);
  });

  it("invalid fields answer 400 naming the field", async () => {
    const running = await start(seeded().handlers);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=a&name=b"), /^Field "name" must be given once/);
    await expect400(running, () => running.http.post("/resources/c1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=bad%20name"), /^Field "app-name" must start with a letter/);
    await expect400(running, () => running.http.post("/resources/c1/bind-app").set("Authorization", GOOD_AUTH).send({ appName: "web", appHosts: "x y" }), /^Field "appHosts\.0" must not contain spaces/);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).send({ name: "db1", tags: [{ a: 1 }] }), /^Field "tags\.0"/);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&parameters.a=1&parameters.a.b=2"), /^Invalid field "parameters\.a\.b"/);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&parameters.__proto__.x=1"), /^Invalid field "parameters\.__proto__\.x"/);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).send("[1,2]").type("json"), /JSON body must be an object/);
    await expect400(running, () => running.http.post("/resources").set("Authorization", GOOD_AUTH).type("json").send("{not json"), /not valid JSON/);
  });

  it("instance names: a letter, then at least one more letter, digit, - or _, at most 63 characters (the platform's rule)", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    for (const good of ["ab", "Redis-1_b", `a${"b".repeat(62)}`]) {
      await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=${good}`).expect(201);
    }
    const empty = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=");
    expect(empty.status).toBe(400);
    expect(empty.text).toBe('Field "name" is required.');
    for (const bad of ["a", "1abc", "-a", "a.b", "..", "a/b", "a%00b", "a%0Ab", "caf%C3%A9", `a${"b".repeat(63)}`]) {
      const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=${bad}`);
      expect(res.status, bad).toBe(400);
      expect(res.text).toMatch(/^Field "name" must start with a letter/);
    }
    expect(fake.received.filter((call) => call.handler === "create")).toHaveLength(3);
  });

  it("create with the reserved name `plans` answers 400", async () => {
    const running = await start(seeded().handlers);
    const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=plans").expect(400);
    expect(res.text).toMatch(/"plans".*reserved/);
  });

  it("bad instance names in the path answer 400 and never reach a handler: .., %2F, control chars, too long", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    for (const [method, path] of [
      ["GET", "/resources/%2E%2E/status"],
      ["GET", "/resources/a%2Fb/status"],
      ["GET", "/resources/..%2F..%2Fetc/status"],
      ["DELETE", "/resources/a%2F..%2Fb"],
      ["POST", "/resources/a%00b/bind-app"],
      ["GET", "/resources/a%0D%0Ab"],
      ["GET", `/resources/${"a".repeat(64)}/status`],
      ["GET", "/resources/9lives/status"],
      ["GET", "/resources/%ZZ/status"],
    ] as const) {
      const res = await rawRequest(running, method, path, method === "POST" ? "app-name=web" : "");
      expect(res.status, path).toBe(400);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      if (!path.includes("%ZZ")) expect(res.text, path).toMatch(/^The instance name in the path must start with a letter/);
    }
    // `..` as a literal segment is not resolved by the server either.
    expect((await rawRequest(running, "GET", "/resources/../status")).status).toBe(400);
    expect(fake.received).toEqual([]);
  });

  it("job names and Variant B hostnames in the path are checked too", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const job = await rawRequest(running, "PUT", "/resources/c1/binds/jobs/a%2Fb");
    expect(job.status).toBe(400);
    expect(job.text).toMatch(/^The job name in the path/);
    for (const host of ["..", "a..b", "a%2Fb", "a%20b", "-a"]) {
      const res = await rawRequest(running, "DELETE", `/resources/c1/hostname/${host}`);
      expect(res.status, host).toBe(400);
      expect(res.text).toMatch(/^The hostname in the path must be a host name or address/);
    }
    expect((await rawRequest(running, "DELETE", "/resources/c1/hostname/10.0.0.1:8080")).status).toBe(200);
    expect(fake.received.map((call) => call.handler)).toEqual(["unbindApp"]);
  });

  it("a body over the limit answers 413", async () => {
    const running = await start(fakeResource().handlers, { bodyLimitBytes: 1024 });
    const res = await running.http
      .post("/resources")
      .set("Authorization", GOOD_AUTH)
      .type(FORM)
      .send(`name=db1&description=${"x".repeat(2000)}`)
      .expect(413);
    expect(res.text).toMatch(/larger than this provider's limit of 1024 bytes/);
    const json = await running.http.post("/resources").set("Authorization", GOOD_AUTH).send({ name: "db1", description: "x".repeat(2000) });
    expect(json.status).toBe(413);
  });

  it("a streamed (chunked) body over the limit answers 413 too", async () => {
    const running = await start(seeded().handlers, { bodyLimitBytes: 1024 });
    const res = await rawRequest(running, "POST", "/resources", `name=db1&description=${"x".repeat(5000)}`, { "transfer-encoding": "chunked" });
    expect(res.status).toBe(413);
    expect(res.headers.connection).toBe("close");
    const small = await rawRequest(running, "POST", "/resources", "name=db2", { "transfer-encoding": "chunked" });
    expect(small.status).toBe(201);
  });

  it("the default limit takes real requests with room to spare (100 KiB body)", async () => {
    const running = await start(seeded().handlers);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=db1&description=${"x".repeat(100 * 1024)}`).expect(201);
  });

  it("a form with more fields than formFieldLimit answers 413 naming the limit; up to it is fine", async () => {
    const running = await start(seeded().handlers);
    const tags = (count: number) => Array.from({ length: count }, (_, i) => `tags=t${i}`).join("&");
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=db1&${tags(999)}`).expect(201);
    const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=db2&${tags(1000)}`);
    expect(res.status).toBe(413);
    expect(res.text).toBe("The form has more than 1000 fields, this provider's limit (option formFieldLimit); send fewer fields.");

    const small = await start(seeded().handlers, { formFieldLimit: 3 });
    await small.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&tags=a&tags=b").expect(201);
    const over = await small.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1&tags=a&tags=b&tags=c");
    expect(over.status).toBe(413);
    expect(over.text).toMatch(/more than 3 fields/);
  });

  it("the costliest bodies of 1 MiB are answered while the health check keeps answering", async () => {
    const running = await start(seeded().handlers);
    const { port } = new URL(running.url);
    const sent = COSTLY_BODIES.map(({ body, type }) => {
      let uploaded!: () => void;
      const upload = new Promise<void>((resolve) => (uploaded = resolve));
      const answer = new Promise<number>((resolve, reject) => {
        const headers = { authorization: GOOD_AUTH, "content-type": type };
        const req = httpRequest({ host: "127.0.0.1", port, method: "POST", path: "/resources", headers }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.on("finish", uploaded);
        req.end(body);
      });
      return { upload, answer };
    });
    // Asked for once every costly body has been sent: it must not wait for their parsing.
    await Promise.all(sent.map(({ upload }) => upload));
    const health = await running.http.get("/healthcheck");
    expect(health.status).toBe(200);
    expect(await Promise.all(sent.map(({ answer }) => answer))).toEqual(COSTLY_BODIES.map(({ status }) => status));
  });

  it("parameters nested deeper than 32 levels answer 400 naming the limit, in a form and in JSON", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const path = (depth: number) => Array.from({ length: depth }, () => "a").join(".");
    const nested = (depth: number): unknown => (depth === 0 ? "1" : { a: nested(depth - 1) });
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=db1&parameters.${path(32)}=1`).expect(201);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).send({ name: "db2", parameters: nested(32) }).expect(201);
    for (const depth of [33, 2000]) {
      const form = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send(`name=db3&parameters.${path(depth)}=1`);
      expect(form.status).toBe(400);
      expect(form.text).toMatch(/^Invalid field "parameters\.a\.a.*": parameters may be nested at most 32 levels deep\.$/);
      expect(form.text.length).toBeLessThan(250);
      const json = await running.http.post("/resources").set("Authorization", GOOD_AUTH).send({ name: "db3", parameters: nested(depth) });
      expect(json.status).toBe(400);
      expect(json.text).toMatch(/^Invalid field "parameters\.a\.a.*": parameters may be nested at most 32 levels deep\.$/);
    }
    expect(fake.received.filter((call) => call.handler === "create")).toHaveLength(2);
  });

  it("a charset other than UTF-8 or any Content-Encoding answers 415", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const post = (body: string | Buffer, headers: Record<string, string>) => rawRequest(running, "POST", "/resources", body, headers);
    for (const type of [`${FORM}; charset=iso-8859-1`, `${FORM}; charset="latin1"`, "application/json; charset=utf-16le", `${FORM}; charset=utf8`]) {
      const res = await post("name=db1", { "content-type": type });
      expect(res.status, type).toBe(415);
      expect(res.text).toMatch(/^Unsupported charset "(iso-8859-1|latin1|utf-16le|utf8)": send the body uncompressed, as .* in UTF-8\.$/);
    }
    for (const coding of ["gzip", "deflate", "br", "x-unknown"]) {
      const res = await post(gzipSync("name=db1"), { "content-encoding": coding });
      expect(res.status, coding).toBe(415);
      expect(res.text).toMatch(/^Unsupported Content-Encoding/);
    }
    expect(fake.received).toEqual([]);
    expect((await post("name=db1", { "content-type": `${FORM}; charset=UTF-8` })).status).toBe(201);
    expect((await post('{"name":"db2"}', { "content-type": "application/json; charset=utf-8", "content-encoding": "identity" })).status).toBe(201);
  });

  it("a body of another Content-Type answers 415", async () => {
    const running = await start(seeded().handlers);
    for (const type of ["text/plain", "application/xml", "multipart/form-data; boundary=x"]) {
      const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).set("Content-Type", type).send("name=db1");
      expect(res.status, type).toBe(415);
      expect(res.text).toMatch(/^Unsupported Content-Type/);
    }
    const none = await rawRequest(running, "POST", "/resources", "name=db1", { "content-type": "" });
    expect(none.status).toBe(415);
  });
});
