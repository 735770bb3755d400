/** HTTP Basic auth as the platform uses it, and the refusal to start without credentials. */
import { afterEach, describe, expect, it } from "vitest";
import { ConfigurationError, createProvider } from "../../src/index.js";
import { AUTH, FORM, PASSWORD, SERVICE_ID, USER, basic, fakeResource, start, stopAll } from "../../../../test/support/fake-provider.js";

afterEach(stopAll);

describe("basic auth", () => {
  it("without credentials: 401, a Basic challenge and a plain-text reason", async () => {
    const running = await start(fakeResource().handlers);
    const res = await running.http.get("/resources/plans").expect(401);
    expect(res.headers["www-authenticate"]).toBe('Basic realm="provider"');
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.text).toMatch(/^Authentication required/);
  });

  it("a wrong password or an unknown user name: 401 on every route", async () => {
    const fake = fakeResource();
    const running = await start(fake.handlers);
    for (const authorization of [basic(USER, "wrong"), basic("someone", PASSWORD), basic(USER, "s3cret"), basic(USER, `${PASSWORD}x`), "Bearer abc", "Basic !!!"]) {
      for (const call of [
        running.http.get("/resources/plans"),
        running.http.post("/resources").type(FORM).send("name=db1"),
        running.http.delete("/resources/db1"),
        running.http.get("/resources/db1/status"),
        running.http.post("/resources/db1/bind-app").type(FORM).send("app-name=web"),
      ]) {
        const res = await call.set("Authorization", authorization);
        expect(res.status, authorization).toBe(401);
        expect(res.headers["www-authenticate"]).toBe('Basic realm="provider"');
      }
    }
    expect(fake.received).toEqual([]);
  });

  it("accepts each configured user name with the one password, which may contain ':'", async () => {
    expect(PASSWORD).toContain(":");
    const running = await start(fakeResource().handlers);
    for (const user of [USER, SERVICE_ID]) {
      await running.http.get("/resources/plans").set("Authorization", basic(user, PASSWORD)).expect(200);
    }
  });

  it("accepts other spellings of a correct header (lower-case scheme, extra spaces)", async () => {
    const running = await start(fakeResource().handlers);
    const encoded = Buffer.from(`${SERVICE_ID}:${PASSWORD}`).toString("base64");
    for (const header of [`basic ${encoded}`, `Basic   ${encoded}`, `BASIC ${encoded}`]) {
      await running.http.get("/resources/plans").set("Authorization", header).expect(200);
    }
  });

  it("the realm is configurable", async () => {
    const running = await start(fakeResource().handlers, { auth: { ...AUTH, realm: "redis-service" } });
    const res = await running.http.get("/resources/plans").expect(401);
    expect(res.headers["www-authenticate"]).toBe('Basic realm="redis-service"');
  });

  it("the healthcheck needs no credentials", async () => {
    const running = await start(fakeResource().handlers);
    await running.http.get("/healthcheck").expect(200, "WORKING");
  });

  it("auth: false serves without credentials", async () => {
    const running = await start(fakeResource().handlers, { auth: false });
    await running.http.get("/resources/plans").expect(200);
  });
});

describe("refusing to start", () => {
  const handlers = fakeResource().handlers;
  const refusals: Array<[string, unknown]> = [
    ["no options", undefined],
    ["no auth key", { registry: false }],
    ["auth: undefined (an unset environment variable)", { auth: undefined }],
    ["empty password", { auth: { usernames: ["redis"], password: "" } }],
    ["password from an unset environment variable", { auth: { usernames: ["redis"], password: undefined } }],
    ["no user names", { auth: { usernames: [], password: "p" } }],
    ["an empty user name", { auth: { usernames: [""], password: "p" } }],
    ["a user name with ':'", { auth: { usernames: ["a:b"], password: "p" } }],
  ];
  for (const [what, options] of refusals) {
    it(`throws with ${what}, saying how to fix it`, () => {
      // Options as a JavaScript caller (or a config file) may pass them.
      const attempt = () => createProvider(handlers, options as Parameters<typeof createProvider>[1]);
      expect(attempt).toThrow(ConfigurationError);
      expect(attempt).toThrow(/auth/);
    });
  }

  it("the message names both fixes: credentials, or auth: false on purpose", () => {
    expect(() => createProvider(handlers, { registry: false } as unknown as Parameters<typeof createProvider>[1])).toThrow(
      /auth: \{ usernames: .*password.*or auth: false/,
    );
  });

  it("throws for other bad options and missing required handlers", () => {
    const { create: _create, ...withoutCreate } = handlers;
    expect(() => createProvider(withoutCreate as typeof handlers, { auth: false, registry: false })).toThrow(/handlers\.create is required/);
    expect(() => createProvider(handlers, { auth: false, registry: false, handlerTimeoutMs: 0 })).toThrow(/handlerTimeoutMs/);
    expect(() => createProvider(handlers, { auth: false, registry: false, bodyLimitBytes: -1 })).toThrow(/bodyLimitBytes/);
    expect(() => createProvider(handlers, { auth: false, registry: false, formFieldLimit: 0 })).toThrow(/formFieldLimit/);
    expect(() => createProvider(handlers, { auth: false, registry: false, variants: ["C" as "A"] })).toThrow(/variants/);
    expect(() => createProvider(handlers, { auth: false, registry: false, requestIdHeader: "bad header" })).toThrow(/requestIdHeader/);
  });
});
