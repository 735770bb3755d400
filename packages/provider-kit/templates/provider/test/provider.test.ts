/**
 * The provider over HTTP, as the platform calls it: form-encoded bodies, Basic auth, JSON answers.
 * The plans are the ones the provider lists (GET /resources/plans), so renaming or adding a plan
 * needs no edit here. How long a test may wait is vitest.config.ts's testTimeout.
 */
import request from "supertest";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { PLANS } from "../src/handlers.js";
import { credentials, serve, type RunningProvider } from "./serve.js";

/** Time the test keeps to fail with what it saw, rather than with vitest's "Test timed out". */
const MARGIN_MS = 2_000;

let provider: RunningProvider;
/** When the running test stops waiting for an instance to be ready: shortly before its timeout. */
let deadline: number;
beforeEach(async ({ task }) => {
  deadline = Date.now() + task.timeout - MARGIN_MS;
  provider = await serve();
});
afterEach(async () => {
  await provider.stop();
});

/** A call with the platform's credentials and headers. */
function call(method: "get" | "post" | "put" | "delete", path: string, form: Record<string, string> = {}) {
  return request(provider.url)
    [method](path)
    .auth(credentials.username, credentials.password)
    .set("Accept", "application/json")
    .type("form")
    .send(form);
}

/** The names of the plans the provider lists, in its order. */
async function planNames(): Promise<string[]> {
  const response = await call("get", "/resources/plans").expect(200);
  return (response.body as Array<{ name: string }>).map((plan) => plan.name);
}

/** Creates an instance (of the first plan unless told) and waits until it is ready: a create may finish in the background. */
async function createInstance(name = "db1", plan?: string): Promise<void> {
  await call("post", "/resources", { name, plan: plan ?? (await planNames())[0]!, team: "team-a" }).expect(201);
  await waitUntilReady(name);
}

/** Polls the instance's status while it answers 202 (provisioning), until the test's deadline. */
async function waitUntilReady(name: string): Promise<void> {
  let status = (await call("get", `/resources/${name}/status`)).status;
  while (status === 202 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    status = (await call("get", `/resources/${name}/status`)).status;
  }
  expect(status, `${name} still provisioning (status 202) near the test's timeout: if create needs longer, raise testTimeout in vitest.config.ts`).toBe(204);
}

describe("the provider", () => {
  it("refuses calls without the manifest's credentials", async () => {
    await request(provider.url).get("/resources/plans").expect(401);
    await request(provider.url).get("/resources/plans").auth(credentials.username, "wrong").expect(401);
  });

  it("lists its plans", async () => {
    const response = await call("get", "/resources/plans").expect(200);
    expect(response.body).toEqual(PLANS);
  });

  it("creates an instance of every plan it lists: 201 at once, running soon after (in the background if need be), describing itself", async () => {
    const plans = await planNames();
    expect(plans.length).toBeGreaterThan(0);
    for (const [index, plan] of plans.entries()) {
      await createInstance(`db${index + 1}`, plan);
      const info = await call("get", `/resources/db${index + 1}`).expect(200);
      expect(info.body).toContainEqual({ label: "Plan", value: plan });
    }
  });

  it("refuses a second instance with the same name", async () => {
    await createInstance();
    await call("post", "/resources", { name: "db1", plan: (await planNames())[0]!, team: "team-a" }).expect(409);
  });

  it("rejects an unknown plan, naming the plans there are", async () => {
    const response = await call("post", "/resources", { name: "db1", plan: "no-such-plan", team: "team-a" }).expect(400);
    expect(response.text).toContain((await planNames()).join(", "));
  });

  it("gives each app its own credentials, and the same ones when an app is bound again", async () => {
    await createInstance();
    const first = await call("post", "/resources/db1/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ DATABASE_NAME: "db1", DATABASE_USER: "app-web" });
    expect(typeof first.body.DATABASE_PASSWORD).toBe("string");

    const again = await call("post", "/resources/db1/bind-app", { "app-name": "web", "app-host": "web.example.com" });
    expect(again.body).toEqual(first.body);

    const other = await call("post", "/resources/db1/bind-app", { "app-name": "worker", "app-host": "w.example.com" });
    expect(other.body.DATABASE_PASSWORD).not.toBe(first.body.DATABASE_PASSWORD);

    await call("delete", "/resources/db1/bind-app", { "app-name": "web", "app-host": "web.example.com" }).expect(200);
    const info = await call("get", "/resources/db1").expect(200);
    expect(info.body).toContainEqual({ label: "Users", value: "1" });
  });

  it("binds and unbinds units and jobs", async () => {
    await createInstance();
    const unit = { "app-name": "web", "app-host": "web.example.com", "unit-host": "10.0.0.7" };
    await call("post", "/resources/db1/bind", unit).expect(201);
    expect((await call("get", "/resources/db1")).body).toContainEqual({ label: "Allowed unit hosts", value: "1" });
    await call("delete", "/resources/db1/bind", unit).expect(200);

    const job = await call("put", "/resources/db1/binds/jobs/nightly", { "job-name": "nightly" });
    expect(job.status).toBeLessThan(300);
    expect(job.body).toMatchObject({ DATABASE_USER: "job-nightly" });
    await call("delete", "/resources/db1/binds/jobs/nightly", { "job-name": "nightly" }).expect(200);
  });

  it("changes the plan on update", async () => {
    await createInstance();
    const plan = (await planNames()).at(-1)!;
    await call("put", "/resources/db1", { plan, team: "team-a" }).expect(200);
    expect((await call("get", "/resources/db1")).body).toContainEqual({ label: "Plan", value: plan });
  });

  it("serves its own action: the body checked, the instance changed", async () => {
    await createInstance();
    const allowed = await call("post", "/resources/db1/allowed-hosts", { host: "10.0.0.8" }).expect(200);
    expect(allowed.body).toEqual({ allowedHosts: 1 });
    expect((await call("get", "/resources/db1")).body).toContainEqual({ label: "Allowed unit hosts", value: "1" });

    const bad = await call("post", "/resources/db1/allowed-hosts", {}).expect(400);
    expect(bad.text).toMatch(/^Field "host": /);
    await call("post", "/resources/db2/allowed-hosts", { host: "10.0.0.8" }).expect(404);
  });

  it("destroys an instance, after which it is unknown", async () => {
    await createInstance();
    await call("delete", "/resources/db1").expect(200);
    await call("get", "/resources/db1/status").expect(404);
    await call("post", "/resources/db1/bind-app", { "app-name": "web", "app-host": "web.example.com" }).expect(404);
  });
});
