/**
 * Multi-cluster services: every handler gets the pool and cluster of the call (`ctx.placement`)
 * from the platform's X-Tsuru-Pool-* and X-Tsuru-Cluster-* headers, and plans can differ per pool.
 */
import { afterEach, describe, expect, it } from "vitest";
import { MemoryStore, PoolRequiredError, type CallPlacement, type HandlerContext, type ProviderHandlers } from "../../src/index.js";
import { FORM, GOOD_AUTH, fakeResource, requestLines, start, stopAll, type Running } from "../../../../test/support/fake-provider.js";

afterEach(stopAll);

const KUBE_CONFIG = { cluster: { server: "https://10.0.0.1:6443" }, user: { token: "kube-secret-token" } };

/** What the platform sends for an instance in pool `blue`, served by cluster `east`. */
const PLACEMENT_HEADERS = {
  "X-Tsuru-Pool-Name": "blue",
  "X-Tsuru-Pool-Provisioner": "kubernetes",
  "X-Tsuru-Cluster-Name": "east",
  "X-Tsuru-Cluster-Provisioner": "kubernetes",
  // One header line per address.
  "X-Tsuru-Cluster-Addresses": ["https://east-1.example.com", "https://east-2.example.com"],
  "X-Tsuru-Cluster-Kube-Config": Buffer.from(JSON.stringify(KUBE_CONFIG)).toString("base64"),
};

const EXPECTED: CallPlacement = {
  poolName: "blue",
  poolProvisioner: "kubernetes",
  clusterName: "east",
  clusterProvisioner: "kubernetes",
  clusterAddresses: ["https://east-1.example.com", "https://east-2.example.com"],
  kubeConfig: KUBE_CONFIG,
};

/** The handlers, each noting the placement its context carried. */
function noting(handlers: ProviderHandlers, seen: Map<string, CallPlacement>): ProviderHandlers {
  const noted: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    if (typeof handler !== "function") continue;
    noted[name] = (...args: unknown[]) => {
      seen.set(name, (args.at(-1) as HandlerContext).placement);
      return (handler as (...args: unknown[]) => unknown)(...args);
    };
  }
  return noted as unknown as ProviderHandlers;
}

function call(running: Running, method: "get" | "post" | "put" | "delete", path: string, form: Record<string, string> = {}) {
  return running.http[method](path).set("Authorization", GOOD_AUTH).set(PLACEMENT_HEADERS).type(FORM).send(form);
}

describe("ctx.placement", () => {
  it("reaches every handler, from the headers, with the registry on", async () => {
    const seen = new Map<string, CallPlacement>();
    const running = await start(noting(fakeResource().handlers, seen), { registry: { store: new MemoryStore() } });
    const app = { "app-name": "web", "app-host": "web.example.com" };
    const unit = { ...app, "unit-host": "10.0.0.9" };
    await call(running, "get", "/resources/plans").expect(200);
    await call(running, "post", "/resources", { name: "db1" }).expect(201);
    await call(running, "put", "/resources/db1", { plan: "small" }).expect(200);
    await call(running, "post", "/resources/db1/bind-app", app).expect(201);
    await call(running, "post", "/resources/db1/bind", unit).expect(201);
    await call(running, "put", "/resources/db1/binds/jobs/nightly").expect(201);
    await call(running, "get", "/resources/db1/status").expect(204);
    await call(running, "get", "/resources/db1").expect(200);
    await call(running, "delete", "/resources/db1/binds/jobs/nightly").expect(200);
    await call(running, "delete", "/resources/db1/bind", unit).expect(200);
    await call(running, "delete", "/resources/db1/bind-app", app).expect(200);
    await call(running, "delete", "/resources/db1").expect(200);
    const handlers = ["plans", "create", "update", "bindApp", "bindUnit", "bindJob", "status", "info", "unbindJob", "unbindUnit", "unbindApp", "destroy"];
    expect([...seen.keys()].sort()).toEqual(handlers.sort());
    for (const [handler, placement] of seen) expect(placement, handler).toEqual(EXPECTED);
  });

  it("is empty without the headers (a service that is not multi-cluster)", async () => {
    const seen = new Map<string, CallPlacement>();
    const running = await start(noting(fakeResource().handlers, seen));
    await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send({ name: "db1" }).expect(201);
    expect(seen.get("create")).toEqual({ clusterAddresses: [] });
  });

  it("is the instance's on binds, where request.placement is the app's (from the body)", async () => {
    const fake = fakeResource();
    const seen = new Map<string, CallPlacement>();
    fake.instances.set("db1", {});
    const running = await start(noting(fake.handlers, seen));
    await call(running, "post", "/resources/db1/bind-app", { "app-name": "web", "app-host": "web.example.com", "app-pool-name": "green" }).expect(201);
    expect(fake.last("bindApp")).toMatchObject({ placement: { poolName: "green" } });
    expect(seen.get("bindApp")).toEqual(EXPECTED);
  });

  it("plans may differ per pool: the pool asked for reaches the plans handler", async () => {
    const running = await start({
      ...fakeResource().handlers,
      plans: (ctx) =>
        ctx.placement.poolName === "gpu"
          ? [{ name: "gpu-large", description: "On the GPU pool." }]
          : [{ name: "small", description: "Anywhere." }],
    });
    const forPool = await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).set("X-Tsuru-Pool-Name", "gpu").expect(200);
    expect(forPool.body).toEqual([{ name: "gpu-large", description: "On the GPU pool." }]);
    const anywhere = await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).expect(200);
    expect(anywhere.body).toEqual([{ name: "small", description: "Anywhere." }]);
  });

  it("a kube config header that does not decode answers 400 naming the header, when the handler reads it", async () => {
    const running = await start({
      ...fakeResource().handlers,
      plans: (ctx) => [{ name: "small", description: ctx.placement.kubeConfig ? "with a kube config" : "without" }],
    });
    const bad = Buffer.from('{"cluster": "kube-secret-token"}').toString("base64");
    const res = await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).set("X-Tsuru-Cluster-Kube-Config", bad).expect(400);
    expect(res.text).toMatch(/^The X-Tsuru-Cluster-Kube-Config header is not a kube config/);
    expect(res.text).not.toContain("kube-secret-token");
  });

  it("never puts the kube config in the log", async () => {
    const running = await start(noting(fakeResource().handlers, new Map()));
    await call(running, "get", "/resources/plans").expect(200);
    expect(requestLines(running.logs)).toHaveLength(1);
    expect(running.logText()).not.toContain("kube-secret-token");
    expect(running.logText()).not.toContain(PLACEMENT_HEADERS["X-Tsuru-Cluster-Kube-Config"]);
  });
});

describe("PoolRequiredError", () => {
  /** Plans that differ per pool, and exist only for a pool. */
  const perPool = fakeResource({
    plans: (ctx) => {
      if (ctx.placement.poolName === undefined) throw new PoolRequiredError("Plans differ per pool: name one.");
      return [{ name: `${ctx.placement.poolName}-small`, description: `On ${ctx.placement.clusterName ?? "any cluster"}.` }];
    },
    create: () => {
      throw new PoolRequiredError("Create this instance in a pool.");
    },
  }).handlers;

  it("answers plans asked without a pool with the 400 and JSON the platform reads as \"pool needed\", and logs why", async () => {
    const running = await start(perPool);
    const res = await running.http.get("/resources/plans").set("Authorization", GOOD_AUTH).expect(400);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(res.text)).toEqual({ msg: "Plans differ per pool: name one.", missing_params: ["cluster"] });
    expect(requestLines(running.logs)).toMatchObject([{ status: 400, reason: "Plans differ per pool: name one." }]);
  });

  it("lets plans asked for a pool through to that pool's plans", async () => {
    const running = await start(perPool);
    const res = await call(running, "get", "/resources/plans").expect(200);
    expect(res.body).toEqual([{ name: "blue-small", description: "On east." }]);
  });

  it("is a plain-text 400 on any other call, where the platform shows the message as it is", async () => {
    const running = await start(perPool);
    const res = await running.http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send({ name: "db1" }).expect(400);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    expect(res.text).toBe("Create this instance in a pool.");
  });
});
