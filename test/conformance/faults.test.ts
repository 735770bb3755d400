/**
 * The kit catches faults: each broken provider is the reference with one fault switched on.
 * The check for the broken rule fails, and nothing else fails: checks that need the broken
 * step are skipped with the reason, every other check still passes.
 */
import { describe, expect, it } from "vitest";
import { formatTree, runConformance } from "../../src/conformance/index.js";
import { CREDENTIALS, PROVISION_MS, FAST, ids, resultOf, serving, statusOf } from "./helpers.js";
import { referenceProvider, type Fault } from "./reference-provider.js";

interface Case {
  fault: Fault;
  /** Exactly the checks that fail. */
  fails: string[];
  /** Checks skipped because a failed check did not pass, with the reason given. */
  skips?: Record<string, string>;
  password?: string;
}

const cases: Case[] = [
  { fault: "update-405", fails: ["update.status", "not-found.update", "transport.no-405"], skips: { "update.supported": "needs update.status, which failed" } },
  { fault: "numeric-env", fails: ["bind-app.env-strings"] },
  {
    fault: "empty-bind-body",
    fails: ["bind-app.json"],
    skips: { "bind-app.env-strings": "needs bind-app.json, which failed", "bind-app.rebind": "needs bind-app.json, which failed" },
  },
  { fault: "bind-unknown-instance-200", fails: ["not-found.bind-app"] },
  { fault: "no-auth", fails: ["auth.no-credentials", "auth.wrong-password", "auth.password-colon"] },
  // The classic split(":") bug: only visible with the password followed by a colon and more.
  { fault: "password-split-all", fails: ["auth.password-colon"], password: "no-colons-here" },
  {
    fault: "info-redirect",
    fails: ["info.status", "not-found.info", "transport.no-redirect"],
    skips: { "info.supported": "needs info.status, which failed", "info.shape": "needs info.supported, which was skipped" },
  },
  { fault: "status-200-empty", fails: ["status.text-body"] },
  { fault: "duplicate-500", fails: ["create.duplicate"] },
  { fault: "plans-text", fails: ["plans.shape"] },
  { fault: "unbind-gone-404", fails: ["unbind-app.repeat"] },
  { fault: "bind-while-provisioning", fails: ["bind-app.provisioning"] },
  {
    fault: "create-500",
    fails: ["create.status"],
    skips: {
      "create.duplicate": "needs create.status, which failed",
      "status.ready": "needs create.status, which failed",
      "bind-app.status": "needs status.ready, which was skipped",
      "unbind-app.status": "needs bind-app.status, which was skipped",
      "destroy.status": "needs create.status, which failed",
    },
  },
];

describe("a broken provider (plain Express, one fault each)", () => {
  it.each(cases)("$fault: fails exactly $fails", async ({ fault, fails, skips = {}, password = CREDENTIALS.password }) => {
    const credentials = { ...CREDENTIALS, password };
    await serving(referenceProvider({ ...credentials, provisionMs: PROVISION_MS, fault }), async ({ url }) => {
      const report = await runConformance({ url, ...credentials, ...FAST });
      expect(ids(report, "fail").sort()).toEqual([...fails].sort());
      expect(ids(report, "warn")).toEqual([]);
      for (const [id, reason] of Object.entries(skips)) expect(resultOf(report, id)).toMatchObject({ outcome: "skip", detail: reason });
      // Each failure says what was sent and what came back.
      for (const id of fails) {
        const failure = resultOf(report, id);
        expect(failure.detail).toBeTruthy();
        expect(failure.exchanges.length).toBeGreaterThan(0);
      }
      expect(report.passed).toBe(false);
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, report.instance, credentials)).toBe(404);
    });
  });

  it("an instance the provider will not remove is retried, then named in the report as left over", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "destroy-500" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      expect(ids(report, "fail")).toEqual(["destroy.status"]);
      expect(report.leftovers).toEqual([report.instance]);
      expect(formatTree(report)).toContain(`Could not remove ${report.instance}: remove it by hand.`);
      expect(await statusOf(url, report.instance)).toBe(204);
    });
  });

  it("an unknown instance the provider wrongly creates on a bind is removed too", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "bind-creates-unknown-instance" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      // Once created, the later probes find it too: what matters here is that it does not stay.
      expect(ids(report, "fail")).toContain("not-found.bind-app");
      const missing = /\/resources\/(pkc-missing-[0-9a-f]+)\//.exec(resultOf(report, "not-found.bind-app").exchanges[0]!.path)?.[1];
      expect(missing).toBeDefined();
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, missing!)).toBe(404);
    });
  });

  it("the skips of a failed create name the step that failed, and the bind checks do not fail", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "create-500" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      const bindChecks = report.results.filter((result) => result.group === "bind-app" || result.group === "bind-job");
      expect(bindChecks.length).toBeGreaterThan(0);
      expect(bindChecks.every((result) => result.outcome === "skip")).toBe(true);
      expect(resultOf(report, "create.status").detail).toBe("POST /resources answered 500, expected 2xx");
      // The not-found, auth and plans checks do not need an instance and still pass.
      expect(resultOf(report, "not-found.bind-app").outcome).toBe("pass");
      expect(resultOf(report, "auth.no-credentials").outcome).toBe("pass");
    });
  });
});
