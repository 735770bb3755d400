/**
 * The project's conformance kit plays the platform against the Redis provider: every call of
 * the contract, on both plans and on the oldest platform's routes, with real Redis underneath.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runConformance, runOsbConformance } from "@provider-kit/conformance";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import type { RunningProvider } from "../redis-provider.js";
import { killServersUnder, PASSWORD, startTestProvider, tempDir, testConfig } from "./support.js";

describe("conformance kit against the Redis provider", () => {
  let redis: RedisServer;
  let dataDir: string;
  let provider: RunningProvider;

  beforeAll(async () => {
    redis = await startRedisServer();
    dataDir = await tempDir("conformance");
    provider = await startTestProvider(testConfig({ dataDir, redisUrl: redis.url }));
  });

  afterAll(async () => {
    await provider?.close();
    await killServersUnder(dataDir);
    await redis?.stop();
  });

  it.each([
    { plan: "shared", variant: "current" },
    { plan: "dedicated", variant: "current" },
    { plan: undefined, variant: "B" }, // no plans on the oldest platform: the first one, shared
  ] as const)("passes every MUST check on plan $plan, variant $variant", async ({ plan, variant }) => {
    const report = await runConformance({
      url: provider.url,
      username: "redis",
      password: PASSWORD,
      plan,
      variant,
      pollIntervalMs: 100,
    });
    const failed = report.results.filter((result) => result.outcome === "fail");
    expect(failed.map((result) => `${result.id}: ${result.detail ?? ""}`)).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.leftovers).toEqual([]);
  });

  it("passes every OSB check as a broker, both plans (the dedicated one in the background)", async () => {
    const report = await runOsbConformance({ url: provider.url, username: "redis", password: PASSWORD, pollIntervalMs: 100 });
    const notPassed = report.results.filter((result) => result.outcome !== "pass");
    // Removing a dedicated server takes no time: the deprovision answers 200, so there is nothing to
    // poll. The example changes no plan (no update handler: plan_updateable false), so no plan change is judged.
    expect(notPassed.map((result) => `${result.id} ${result.outcome}: ${result.detail ?? ""}`)).toEqual([
      "osb-last-operation.gone skip: the deprovision finished at once (200): nothing to poll",
      "osb-update.plan skip: no plan the run provisioned is plan_updateable: a platform may not change it",
      "osb-update.concurrent skip: needs osb-update.plan, which was skipped",
    ]);
    expect(report.passed).toBe(true);
    expect(report.leftovers).toEqual([]);
  });
});
