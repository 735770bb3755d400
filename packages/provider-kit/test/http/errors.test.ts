/** What handlers' failures look like to the platform, and what reaches the log. */
import { Agent, request as httpRequest } from "node:http";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  AlreadyExistsError,
  BadRequestError,
  NotFoundError,
  NotReadyError,
  ProviderError,
} from "../../src/index.js";
import { FORM, GOOD_AUTH, fakeResource, requestLines, start, stopAll } from "../../../../test/support/fake-provider.js";
import { eventually } from "../../../../test/support/eventually.js";

afterEach(stopAll);

interface Settle {
  resolve(): void;
  reject(error: Error): void;
}

/** One call over `agent`, with the socket it used. */
function send(agent: Agent, url: string, method: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; body: string; socket: Socket }>((resolve, reject) => {
    const call = httpRequest(url, { method, agent, headers: { Authorization: GOOD_AUTH, ...headers } }, (res) => {
      const socket = res.socket; // released to the agent (and unset here) once the answer ends
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text, socket }));
    });
    call.on("error", reject);
    call.end(body);
  });
}

describe("error classes", () => {
  const cases: Array<[string, Error, number, string]> = [
    ["NotFoundError", new NotFoundError(), 404, "Instance not found."],
    ["NotReadyError", new NotReadyError(), 412, "Instance is still being provisioned; try again in a moment."],
    ["AlreadyExistsError", new AlreadyExistsError(), 409, "An instance with this name already exists."],
    ["BadRequestError", new BadRequestError('Plan "huge" does not exist; choose small or large.'), 400, 'Plan "huge" does not exist; choose small or large.'],
    ["ProviderError", new ProviderError("The Redis cluster is full; try another plan."), 500, "The Redis cluster is full; try another plan."],
    ["ProviderError with its own status", new ProviderError("Quota exceeded.", 403), 403, "Quota exceeded."],
  ];
  for (const [name, error, status, text] of cases) {
    it(`${name} → ${status} with its message as plain text`, async () => {
      const running = await start(
        fakeResource({
          create: async () => {
            throw error;
          },
          bindApp: async () => {
            throw error;
          },
        }).handlers,
      );
      for (const call of [
        running.http.post("/resources").type(FORM).send("name=db1"),
        running.http.post("/resources/db1/bind-app").type(FORM).send("app-name=web"),
      ]) {
        const res = await call.set("Authorization", GOOD_AUTH);
        expect(res.status).toBe(status);
        expect(res.headers["content-type"]).toMatch(/^text\/plain/);
        expect(res.text).toBe(text);
      }
    });
  }

  it("a ProviderError 500 is logged with its error; 4xx answers are not", async () => {
    const running = await start(
      fakeResource({
        create: async () => {
          throw new ProviderError("Out of capacity.");
        },
        destroy: async () => {
          throw new NotFoundError();
        },
      }).handlers,
    );
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=db1").expect(500);
    await running.http.delete("/resources/db1").set("Authorization", GOOD_AUTH).expect(404);
    await eventually(() => requestLines(running.logs).length === 2, 10_000, "two log lines");
    const [failed, notFound] = requestLines(running.logs);
    expect(failed).toMatchObject({ msg: "request failed", status: 500, err: { message: "Out of capacity." } });
    expect(notFound).toMatchObject({ msg: "request", status: 404 });
    expect(notFound).not.toHaveProperty("err");
  });
});

describe("unexpected failures", () => {
  it("a non-ProviderError throw → generic 500 naming the request id; the details reach the log only", async () => {
    const secret = "postgres://admin:hunter2@db.internal/prod";
    const running = await start(
      fakeResource({
        bindApp: async () => {
          throw new Error(`connect failed for ${secret}`);
        },
      }).handlers,
    );
    const res = await running.http
      .post("/resources/db1/bind-app")
      .set("Authorization", GOOD_AUTH)
      .set("X-Request-ID", "req-42")
      .type(FORM)
      .send("app-name=web")
      .expect(500);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.text).toBe(
      "The provider failed to handle this call (request id req-42). Its operator can find the details in the provider's log.",
    );
    expect(res.text).not.toContain("hunter2");
    await eventually(() => requestLines(running.logs).length === 1, 10_000, "the log line");
    const [line] = requestLines(running.logs);
    expect(line).toMatchObject({ level: 50, status: 500, requestId: "req-42", err: { type: "Error", message: `connect failed for ${secret}` } });
    expect((line?.err as { stack: string }).stack).toContain("errors.test.ts");
  });

  it("a thrown non-Error value is a generic 500 too", async () => {
    const running = await start(
      fakeResource({
        status: async () => {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- what a handler may throw, not what it should
          throw "plain string";
        },
      }).handlers,
    );
    const res = await running.http.get("/resources/db1/status").set("Authorization", GOOD_AUTH).expect(500);
    expect(res.text).toMatch(/^The provider failed to handle this call \(request id /);
  });

  it("a malformed bind result → generic 500; the values never reach the body or the log", async () => {
    const running = await start(
      fakeResource({
        bindApp: async () => ({ PASSWORD: "bind-secret-value", NESTED: { x: 1 } }) as unknown as Record<string, string>,
      }).handlers,
    );
    const res = await running.http.post("/resources/db1/bind-app").set("Authorization", GOOD_AUTH).type(FORM).send("app-name=web").expect(500);
    expect(res.text).toMatch(/^The provider failed to handle this call/);
    await eventually(() => requestLines(running.logs).length === 1, 10_000, "the log line");
    expect(running.logText()).toContain('for the variable \\"NESTED\\"');
    expect(running.logText()).not.toContain("bind-secret-value");
  });

  it("a status handler returning something else → generic 500", async () => {
    const running = await start(fakeResource({ status: async () => "ok" as unknown as "running" }).handlers);
    await running.http.get("/resources/db1/status").set("Authorization", GOOD_AUTH).expect(500);
  });
});

describe("handler timeout", () => {
  it("answers 500 with a clear message at the timeout and aborts the handler's signal", async () => {
    let signal: AbortSignal | undefined;
    const running = await start(
      fakeResource({
        create: (_request, context) => {
          signal = context.signal;
          // Never settles on its own: only the framework's timeout ends this call.
          return new Promise<void>(() => {});
        },
      }).handlers,
      { handlerTimeoutMs: 200 },
    );
    const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).set("X-Request-ID", "slow-1").type(FORM).send("name=db1").expect(500);
    expect(res.text).toBe(
      "The provider did not finish this call within 0.2 s and gave up (request id slow-1). Try again later; if it keeps happening, check the provider's log.",
    );
    expect(signal?.aborted).toBe(true);
    expect(signal?.reason).toBeInstanceOf(ProviderError);
    await eventually(() => requestLines(running.logs).length === 1, 10_000, "the log line");
    expect(requestLines(running.logs)[0]).toMatchObject({ status: 500, requestId: "slow-1", err: { message: expect.stringMatching(/within 0\.2 s/) } });
  });

  it.each([
    ["resolves", (late: Settle) => late.resolve()],
    ["rejects", (late: Settle) => late.reject(new Error("late failure"))],
  ])("a handler that %s after the timeout changes nothing: one answer, one log line, the connection kept", async (_outcome, settleLate) => {
    let settledLate = false;
    const running = await start(
      fakeResource({
        create: (_request, context) =>
          new Promise<void>((resolve, reject) => {
            context.signal.addEventListener("abort", () =>
              setTimeout(() => {
                settleLate({ resolve, reject });
                settledLate = true;
              }, 20),
            );
          }),
      }).handlers,
      { handlerTimeoutMs: 100 },
    );
    // One keep-alive connection: a second answer attempt would make Express cut it.
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const timedOut = await send(agent, `${running.url}/resources`, "POST", { "X-Request-ID": "late-1", "Content-Type": FORM }, "name=db1");
    expect(timedOut.status).toBe(500);
    await eventually(() => settledLate, 10_000, "the handler settling after its timeout");
    await new Promise((resolve) => setImmediate(resolve));
    const after = await send(agent, `${running.url}/healthcheck`, "GET", { "X-Request-ID": "after-1" });
    agent.destroy();
    expect([after.status, after.body]).toEqual([200, "WORKING"]);
    expect(after.socket).toBe(timedOut.socket);
    await eventually(() => requestLines(running.logs).length === 2, 10_000, "both log lines");
    expect(requestLines(running.logs).map((line) => [line.requestId, line.status])).toEqual([
      ["late-1", 500],
      ["after-1", 200],
    ]);
    expect(running.logText()).not.toContain("late failure");
  });

  it("a handler that finishes in time keeps its signal un-aborted", async () => {
    let signal: AbortSignal | undefined;
    const running = await start(
      fakeResource({
        status: async (_request, context) => {
          signal = context.signal;
          return "running" as const;
        },
      }).handlers,
      { handlerTimeoutMs: 5_000 },
    );
    await running.http.get("/resources/db1/status").set("Authorization", GOOD_AUTH).expect(204);
    expect(signal?.aborted).toBe(false);
  });
});
