/**
 * Multi-cluster providers: the kit asks their plans per pool, with the pool's headers as the
 * platform sends them, and every call about its instances carries the instances' pool. Real
 * providers built with createProvider, served on loopback behind a listener that notes the
 * headers each request came with.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import {
  BadRequestError,
  createProvider,
  MemoryStore,
  PoolRequiredError,
  type HandlerContext,
  type Plan,
  type ProviderHandlers,
} from "provider-kit";
import { ConformanceUsageError, runConformance, type ConformanceOptions } from "../../src/conformance/index.js";
import { CREDENTIALS, FAST, ids, resultOf } from "./helpers.js";

/** What one request carried: its route and the pool and cluster headers (every address line). */
interface Seen {
  method: string;
  path: string;
  pool?: string;
  poolProvisioner?: string;
  cluster?: string;
  clusterProvisioner?: string;
  addresses: string[];
  kubeConfig: boolean;
}

function seenOf(req: http.IncomingMessage): Seen {
  const text = (name: string) => (typeof req.headers[name] === "string" ? req.headers[name] : undefined);
  const addresses: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === "x-tsuru-cluster-addresses") addresses.push(req.rawHeaders[i + 1]!);
  }
  return {
    method: req.method ?? "",
    path: req.url ?? "",
    pool: text("x-tsuru-pool-name"),
    poolProvisioner: text("x-tsuru-pool-provisioner"),
    cluster: text("x-tsuru-cluster-name"),
    clusterProvisioner: text("x-tsuru-cluster-provisioner"),
    addresses,
    kubeConfig: req.headers["x-tsuru-cluster-kube-config"] !== undefined,
  };
}

/** Each pool's plans; any other pool has the common ones. */
const PLANS_BY_POOL: Record<string, Plan[]> = {
  "pkc-pool-a": [
    { name: "a-small", description: "Small, on pool a" },
    { name: "a-large", description: "Large, on pool a" },
  ],
  "pkc-pool-b": [{ name: "b-small", description: "Small, on pool b" }],
};
const COMMON_PLANS: Plan[] = [{ name: "small", description: "Small, anywhere" }];

/** Plans per pool, and only for a pool: what a multi-cluster service does. */
function plansOfPool(ctx: HandlerContext): Plan[] {
  const pool = ctx.placement.poolName;
  if (pool === undefined) throw new PoolRequiredError("This service's plans differ per pool: name the pool.");
  return PLANS_BY_POOL[pool] ?? COMMON_PLANS;
}

/**
 * A resource living in a pool. `served` answers the plans calls; create takes the plans `offered`
 * for the call's pool (by default those of plansOfPool, which needs a pool): instance calls
 * without the pool's headers, or with a plan of another pool, fail the run.
 */
function multiClusterHandlers(served: ProviderHandlers["plans"] = plansOfPool, offered: (ctx: HandlerContext) => Plan[] = plansOfPool): ProviderHandlers {
  const poolOf = new Map<string, string>();
  return {
    plans: served,
    create: (request, ctx) => {
      const names = offered(ctx).map((plan) => plan.name);
      if (request.plan && !names.includes(request.plan)) {
        throw new BadRequestError(`There is no plan "${request.plan}" here: the plans are ${names.join(", ")}.`);
      }
      poolOf.set(request.instance, ctx.placement.poolName ?? "");
    },
    destroy: (request) => {
      poolOf.delete(request.instance);
    },
    bindApp: (request, ctx) => ({ THING_POOL: poolOf.get(request.instance) ?? "", THING_CLUSTER: ctx.placement.clusterName ?? "", THING_PASSWORD: `${request.instance}/${request.appName}` }),
    unbindApp: () => {},
    bindJob: (request) => ({ THING_JOB: request.jobName }),
    unbindJob: () => {},
    update: () => {},
    info: (request, ctx) => [{ label: "Pool", value: ctx.placement.poolName ?? "none" }],
  };
}

/** Runs the kit against `handlers` served on loopback; returns the report and every request the provider got. */
async function check(handlers: ProviderHandlers, options: Partial<ConformanceOptions> = {}) {
  const provider = createProvider(handlers, {
    auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password },
    registry: { store: new MemoryStore() },
    logger: pino({ level: "silent" }),
  });
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push(seenOf(req));
    provider.requestListener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const report = await runConformance({ url, ...CREDENTIALS, ...FAST, ...options });
    return { report, seen };
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await provider.close();
  }
}

const plansCalls = (seen: Seen[]) => seen.filter((request) => request.path === "/resources/plans");

describe("a multi-cluster provider (plans per pool, a pool required)", () => {
  it("passes: the kit finds it multi-cluster from its plans, asks each pool's, and sends the pool's headers as the platform does", async () => {
    const { report, seen } = await check(multiClusterHandlers());
    expect(ids(report, "fail")).toEqual([]);
    expect(report.passed).toBe(true);
    expect(resultOf(report, "plans.status")).toMatchObject({ outcome: "pass", detail: expect.stringContaining('400 "pool needed"') });
    expect(resultOf(report, "plans.shape")).toMatchObject({ outcome: "skip", detail: "the plans need a pool: pools.plans judges each pool's" });
    expect(resultOf(report, "pools.pool-read").outcome).toBe("pass");
    // Plans differ per pool, and the kit saw each pool's.
    expect(resultOf(report, "pools.plans")).toMatchObject({ outcome: "pass", detail: "pkc-pool-a: a-small, a-large; pkc-pool-b: b-small" });

    const [first, ...later] = plansCalls(seen);
    expect(first).toMatchObject({ pool: undefined, cluster: undefined, addresses: [] });
    const cluster = {
      poolProvisioner: "kubernetes",
      cluster: "pkc-cluster",
      clusterProvisioner: "kubernetes",
      addresses: ["https://10.0.0.1:6443", "https://10.0.0.2:6443"],
      kubeConfig: false,
    };
    expect(later.filter((request) => request.pool !== undefined)).toEqual([
      { method: "GET", path: "/resources/plans", pool: "pkc-pool-a", ...cluster },
      { method: "GET", path: "/resources/plans", pool: "pkc-pool-b", ...cluster },
    ]);
    // Every call about an instance carries its pool's headers: the first pool's.
    const instanceCalls = seen.filter((request) => request.path.startsWith("/resources/pkc-"));
    expect(instanceCalls.length).toBeGreaterThan(10);
    for (const request of instanceCalls) expect(request, `${request.method} ${request.path}`).toMatchObject({ pool: "pkc-pool-a", ...cluster });
    // The instance got a plan of its own pool (create refuses any other).
    expect(resultOf(report, "create.status").outcome).toBe("pass");
    expect(report.leftovers).toEqual([]);
  });

  it("asks the pools it is given, and names them in the pass", async () => {
    const { report, seen } = await check(multiClusterHandlers(), { pools: ["gpu", "pkc-pool-b", "cpu-2"], groups: ["pools"] });
    expect(resultOf(report, "pools.plans")).toMatchObject({ outcome: "pass", detail: "gpu: small; pkc-pool-b: b-small; cpu-2: small" });
    expect(plansCalls(seen).map((request) => request.pool)).toEqual([undefined, "gpu", "pkc-pool-b", "cpu-2"]);
  });

  it("refuses pools the platform could not name, before calling the provider", async () => {
    const run = (pools: string[]) => runConformance({ url: "http://127.0.0.1:9", ...CREDENTIALS, pools });
    await expect(run(["Pool_A"])).rejects.toThrow(ConformanceUsageError);
    await expect(run(["Pool_A"])).rejects.toThrow('Pool name "Pool_A" is not one the platform accepts');
    await expect(run(["a", "a"])).rejects.toThrow('Pool "a" is given twice');
    await expect(run([])).rejects.toThrow("Give at least one pool");
  });
});

describe("a broken multi-cluster provider", () => {
  it("that ignores the pool headers and always answers \"pool needed\" fails pools.pool-read, naming the pools, and pools.plans is skipped", async () => {
    const { report } = await check(
      multiClusterHandlers(() => {
        throw new PoolRequiredError();
      }),
    );
    expect(report.passed).toBe(false);
    expect(ids(report, "fail")).toEqual(["pools.pool-read"]);
    const failed = resultOf(report, "pools.pool-read");
    expect(failed.detail).toContain('pool "pkc-pool-a": GET /resources/plans answered 400 "pool needed"');
    expect(failed.detail).toContain('pool "pkc-pool-b": GET /resources/plans answered 400 "pool needed"');
    expect(failed.detail).toContain("read it (ctx.placement.poolName in provider-kit) and answer that pool's plans");
    expect(failed.exchanges.map((exchange) => exchange.response?.status)).toEqual([400, 400]);
    expect(resultOf(report, "pools.plans")).toMatchObject({ outcome: "skip", detail: "needs pools.pool-read, which failed" });
  });

  it("that fails the plans of one pool fails pools.plans, naming that pool and what to do", async () => {
    const { report } = await check(
      multiClusterHandlers((ctx) => {
        if (ctx.placement.poolName === "pkc-pool-b") throw new Error("pool b's plan catalogue is unreachable");
        return plansOfPool(ctx);
      }),
    );
    expect(ids(report, "fail")).toEqual(["pools.plans"]);
    const failed = resultOf(report, "pools.plans");
    expect(failed.detail).toMatch(/^pool "pkc-pool-b": GET \/resources\/plans answered 500, expected 200/);
    expect(failed.detail).not.toContain("pkc-pool-a");
    expect(failed.detail).toContain("answer the plans of each pool the platform names with 200");
    expect(failed.exchanges.map((exchange) => exchange.response?.status)).toEqual([500]);
    expect(resultOf(report, "pools.pool-read").outcome).toBe("pass");
  });
});

describe("a provider whose plans need no pool", () => {
  const samePlansEverywhere = () => multiClusterHandlers(() => COMMON_PLANS, () => COMMON_PLANS);

  it("is not multi-cluster: the pools checks are skipped, saying why and how to ask anyway, and no call names a pool", async () => {
    const { report, seen } = await check(samePlansEverywhere());
    expect(report.passed).toBe(true);
    expect(resultOf(report, "pools.pool-read")).toMatchObject({
      outcome: "skip",
      detail:
        'the provider is not multi-cluster (GET /resources/plans without a pool answered 200, not 400 with missing_params ["cluster"]); ' +
        "pass --multi-cluster (multiCluster: true) to ask its plans per pool all the same",
    });
    expect(resultOf(report, "pools.plans")).toMatchObject({ outcome: "skip", detail: "needs pools.pool-read, which was skipped" });
    expect(plansCalls(seen).filter((request) => request.pool !== undefined)).toEqual([]);
  });

  it("is checked per pool with multiCluster, its instances living in the first pool", async () => {
    const { report, seen } = await check(samePlansEverywhere(), { multiCluster: true, pools: ["gpu", "cpu"] });
    expect(ids(report, "fail")).toEqual([]);
    expect(resultOf(report, "plans.shape").outcome).toBe("pass");
    expect(resultOf(report, "pools.plans")).toMatchObject({ outcome: "pass", detail: "gpu: small; cpu: small" });
    const creates = seen.filter((request) => request.method === "POST" && request.path === "/resources");
    expect(creates.map((request) => request.pool)).toEqual(creates.map(() => "gpu"));
  });

  it("on Variant A no pool is asked for, and the report says why", async () => {
    const { report, seen } = await check(samePlansEverywhere(), { variant: "A", multiCluster: true });
    expect(report.results.map((result) => result.id)).not.toContain("pools.plans");
    expect(report.notes).toEqual(["No plans were asked per pool: multi-cluster services are today's platform's (variant current), not Variant A's."]);
    expect(seen.filter((request) => request.pool !== undefined && request.path === "/resources/plans")).toEqual([]);
  });
});
