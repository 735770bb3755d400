/**
 * The kit against a provider written with plain Express (no provider-kit code): a provider that
 * follows the contract passes every check, in every variant and encoding, and the kit leaves
 * nothing behind on it.
 */
import express from "express";
import { describe, expect, it } from "vitest";
import { ConformanceUsageError, runConformance, type Encoding, type Variant } from "../../src/conformance/index.js";
import { CREDENTIALS, PROVISION_MS, FAST, ids, resultOf, serving, statusOf } from "./helpers.js";
import { referenceProvider } from "./reference-provider.js";

describe("a provider that follows the contract (plain Express)", () => {
  const runs: Array<[Variant, Encoding]> = [
    ["current", "form"],
    ["current", "json"],
    ["A", "form"],
    ["B", "form"],
  ];

  it.each(runs)("passes every check of variant %s with %s bodies, and its instance is removed", async (variant, encoding) => {
    const app = referenceProvider({ ...CREDENTIALS, provisionMs: PROVISION_MS, readyAfterRefusedBind: true });
    await serving(app, async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST, variant, encoding });
      expect(ids(report, "fail")).toEqual([]);
      expect(ids(report, "warn")).toEqual([]);
      expect(report.passed).toBe(true);
      expect(report.interrupted).toBe(false);
      // Asynchronous provisioning: the bind sent while the status said 202 was refused with 412.
      expect(resultOf(report, "bind-app.provisioning").outcome).toBe("pass");
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, report.instance)).toBe(404);
    });
  });

  it("runs only the variant's checks: Variant B has no auth, plans, job or update checks", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, variant: "B" });
      const groups = new Set(report.results.map((result) => result.group));
      expect([...groups]).not.toContain("auth");
      expect([...groups]).not.toContain("plans");
      expect([...groups]).not.toContain("bind-job");
      expect([...groups]).not.toContain("update");
      expect(report.results.map((result) => result.id)).toContain("not-found.unbind-hostname");
    });
  });

  it("skips the 412 check, with the reason, when the provider provisions synchronously", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 0 }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      expect(report.passed).toBe(true);
      expect(resultOf(report, "bind-app.provisioning")).toMatchObject({
        outcome: "skip",
        detail: "the first status answer was not 202: the provider provisions synchronously",
      });
    });
  });

  it("runs only the asked groups, plus the steps they need", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, groups: ["unbind-app"] });
      // unbind-app needs a bound app, so create, status and bind ran, but only unbind-app is reported.
      expect(report.results.map((result) => result.id)).toEqual(["unbind-app.status", "unbind-app.repeat"]);
      expect(ids(report, "pass")).toEqual(["unbind-app.status", "unbind-app.repeat"]);
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, report.instance)).toBe(404);
    });
  });

  it("runs every step when a whole-run group is asked for, and reports only that group", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "update-405" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, groups: ["transport"] });
      expect(report.results.map((result) => result.id)).toEqual(["transport.no-405", "transport.no-redirect", "transport.no-secret", "transport.json-content-type"]);
      expect(ids(report, "fail")).toEqual(["transport.no-405"]);
      expect(resultOf(report, "transport.no-405").detail).toContain("PUT /resources/pkc-");
    });
  });

  it("removes the instance when the run is aborted while provisioning", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 60_000 }), async ({ url }) => {
      const controller = new AbortController();
      const report = await runConformance({
        url,
        ...CREDENTIALS,
        ...FAST,
        signal: controller.signal,
        onProgress: (event) => {
          if (event.type === "waiting") controller.abort();
        },
      });
      expect(report.interrupted).toBe(true);
      expect(report.passed).toBe(false);
      expect(resultOf(report, "destroy.status")).toMatchObject({ outcome: "skip", detail: "the run was interrupted before this check" });
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, report.instance)).toBe(404);
    });
  });

  it("fails the wait for readiness after the provisioning timeout, and still removes the instance", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 60_000 }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, pollIntervalMs: 50, provisionTimeoutMs: 300 });
      expect(resultOf(report, "status.ready")).toMatchObject({ outcome: "fail" });
      expect(resultOf(report, "status.ready").detail).toMatch(/^still 202 \(pending\) after \d+ s; raise the provisioning timeout/);
      // Still provisioning (a bind answers 412): what needs a ready instance is skipped, with the reason.
      expect(resultOf(report, "bind-app.status")).toMatchObject({
        outcome: "skip",
        detail: `needs status.ready, which did not pass, and POST /resources/${report.instance}/bind-app answered 412 (still provisioning)`,
      });
      expect(resultOf(report, "update.status").outcome).toBe("skip");
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, report.instance)).toBe(404);
    });
  });

  it("refuses a plan the provider does not list, naming the plans it lists, before creating anything", async () => {
    const sent: string[] = [];
    const app = express()
      .use((req, _res, next) => {
        sent.push(`${req.method} ${req.path}`);
        next();
      })
      .use(referenceProvider(CREDENTIALS));
    await serving(app, async ({ url }) => {
      const run = runConformance({ url, ...CREDENTIALS, ...FAST, plan: "shared" });
      await expect(run).rejects.toThrow(ConformanceUsageError);
      await expect(run).rejects.toThrow('The plan "shared" is not one the provider lists (small, large): pass one of those as --plan');
      expect(sent).toEqual(["GET /resources/plans"]);
    });
  });
});
