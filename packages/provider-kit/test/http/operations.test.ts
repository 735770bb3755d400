/** Request ids, the one log line per request, secrets kept out of logs, and graceful close. */
import { afterEach, describe, expect, it } from "vitest";
import { FORM, GOOD_AUTH, PASSWORD, fakeResource, requestLines, start, stopAll } from "../../../../test/support/fake-provider.js";
import { eventually } from "../../../../test/support/eventually.js";
import { gate } from "../../../../test/support/gate.js";

afterEach(stopAll);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function seeded() {
  const fake = fakeResource();
  fake.instances.set("cache1", {});
  return fake;
}

describe("request id", () => {
  it("echoes the caller's X-Request-ID and hands it to the handler", async () => {
    const fake = seeded();
    const running = await start(fake.handlers);
    const res = await running.http.get("/resources/cache1/status").set("Authorization", GOOD_AUTH).set("X-Request-ID", "abc-123").expect(204);
    expect(res.headers["x-request-id"]).toBe("abc-123");
    expect(fake.received.at(-1)?.context.requestId).toBe("abc-123");
  });

  it("generates one when absent or unusable, on every answer (401 and 404 too)", async () => {
    const running = await start(seeded().handlers);
    const seen = new Set<string>();
    for (const res of [
      await running.http.get("/resources/cache1/status").set("Authorization", GOOD_AUTH),
      await running.http.get("/resources/cache1/status"),
      await running.http.get("/nowhere").set("Authorization", GOOD_AUTH),
      await running.http.get("/resources/cache1/status").set("Authorization", GOOD_AUTH).set("X-Request-ID", "x".repeat(500)),
    ]) {
      expect(res.headers["x-request-id"]).toMatch(UUID);
      seen.add(res.headers["x-request-id"] as string);
    }
    expect(seen.size).toBe(4);
  });

  it("reads the header the operator configures", async () => {
    const running = await start(seeded().handlers, { requestIdHeader: "X-Correlation-Id" });
    const res = await running.http.get("/resources/cache1/status").set("Authorization", GOOD_AUTH).set("X-Correlation-Id", "corr-9").expect(204);
    expect(res.headers["x-correlation-id"]).toBe("corr-9");
    expect(res.headers["x-request-id"]).toBeUndefined();
  });
});

describe("request log", () => {
  it("writes one line per request with method, route pattern, instance, status, duration, request id, user and event id", async () => {
    const running = await start(seeded().handlers);
    await running.http
      .post("/resources/cache1/bind-app")
      .set("Authorization", GOOD_AUTH)
      .set("X-Request-ID", "rid-1")
      .set("X-Tsuru-User", "ann@example.com")
      .set("X-Tsuru-Eventid", "ev-1")
      .type(FORM)
      .send("app-name=web")
      .expect(201);
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).set("X-Request-ID", "rid-2").type(FORM).send("name=db9&user=bob&eventid=ev-2").expect(201);
    await running.http.get("/resources/cache1/status").set("X-Request-ID", "rid-3").expect(401);
    await eventually(() => requestLines(running.logs).length === 3, 10_000, "three log lines");
    expect(running.logs).toHaveLength(3);
    const [bind, create, unauthorized] = requestLines(running.logs);
    expect(bind).toMatchObject({
      level: 30,
      msg: "request",
      method: "POST",
      route: "/resources/:instance/bind-app",
      instance: "cache1",
      status: 201,
      requestId: "rid-1",
      user: "ann@example.com",
      eventId: "ev-1",
    });
    expect(typeof bind?.durationMs).toBe("number");
    expect(create).toMatchObject({ route: "/resources", instance: "db9", status: 201, requestId: "rid-2", user: "bob", eventId: "ev-2" });
    // The route matched before auth refused the call.
    expect(unauthorized).toMatchObject({ method: "GET", route: "/resources/:instance/status", status: 401, requestId: "rid-3" });
    expect(unauthorized).not.toHaveProperty("instance");
  });

  it("never logs the Authorization header, the password, bodies or bind results", async () => {
    const running = await start(seeded().handlers);
    await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web&parameters.token=param-secret").expect(201);
    await running.http.post("/resources/cache1/bind-app").set("Authorization", GOOD_AUTH).send({ appName: "web", parameters: { token: "param-secret" } }).expect(201);
    await running.http.put("/resources/cache1/binds/jobs/nightly").set("Authorization", GOOD_AUTH).type(FORM).send("job-name=nightly").expect(201);
    await running.http.get("/resources/plans").set("Authorization", `Basic ${Buffer.from(`redis:wrong-${PASSWORD}`).toString("base64")}`).expect(401);
    await eventually(() => requestLines(running.logs).length === 4, 10_000, "four log lines");
    const text = running.logText();
    for (const secret of [
      PASSWORD,
      GOOD_AUTH,
      GOOD_AUTH.slice("Basic ".length),
      "bind-secret-value",
      "job-secret-value",
      "param-secret",
      "authorization",
    ]) {
      expect(text.toLowerCase(), secret).not.toContain(secret.toLowerCase());
    }
  });

  it("ctx.log is a child logger carrying the request id", async () => {
    const running = await start(
      fakeResource({
        create: async (_request, context) => {
          context.log.info({ step: "allocate" }, "allocating");
        },
      }).handlers,
    );
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).set("X-Request-ID", "rid-log").type(FORM).send("name=db1").expect(201);
    await eventually(() => running.logs.length === 2, 10_000, "two log lines");
    expect(running.logs[0]).toMatchObject({ msg: "allocating", step: "allocate", requestId: "rid-log" });
  });
});

describe("close()", () => {
  it("drains calls in flight, answers 503 to new ones, then resolves", async () => {
    let release: (() => void) | undefined;
    let started = false;
    const fake = fakeResource({
      create: async () => {
        started = true;
        await new Promise<void>((resolve) => {
          release = resolve;
        });
      },
    });
    const running = await start(fake.handlers);
    const inFlight = running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=slow1").then((res) => res);
    await eventually(() => started, 10_000, "the slow create to start");

    let closed = false;
    const closing = running.provider.close().then(() => {
      closed = true;
    });
    const refused = await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH);
    expect(refused.status).toBe(503);
    expect(refused.text).toBe("The provider is shutting down; try again in a moment.");
    expect(closed).toBe(false);

    release?.();
    expect((await inFlight).status).toBe(201);
    await closing;
    expect(closed).toBe(true);
  });

  it("called twice (SIGINT, then SIGTERM) while a call is in flight, resolves for both callers once it has answered", async () => {
    const release = gate();
    const started = gate();
    const fake = fakeResource({
      create: async () => {
        started.open();
        await release.opened;
      },
    });
    const running = await start(fake.handlers);
    const inFlight = running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=slow1").then((res) => res);
    await started.opened;
    const first = running.provider.close();
    const second = running.provider.close();
    expect(second).toBe(first);
    release.open();
    expect((await inFlight).status).toBe(201);
    await Promise.all([first, second]);
  });

  it("resolves at once when nothing is in flight", async () => {
    const running = await start(seeded().handlers);
    await running.provider.close();
    await running.http.get("/healthcheck").expect(503);
  });
});
