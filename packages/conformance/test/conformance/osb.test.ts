/**
 * `check --osb` against a broker written for the tests (osb-broker.ts), over real HTTP: the
 * healthy broker passes every check; each planted fault gets exactly its verdict.
 */
import { describe, expect, it } from "vitest";
import { formatJunit, formatTree, runOsbConformance, type ConformanceReport } from "../../src/conformance/index.js";
import { ids, serving } from "./helpers.js";
import { BROKER_CREDENTIALS, osbBroker, type OsbFault } from "./osb-broker.js";

const check = (fault?: OsbFault): Promise<ConformanceReport> =>
  serving(osbBroker(fault), (broker) => runOsbConformance({ url: broker.url, ...BROKER_CREDENTIALS, pollIntervalMs: 10, provisionTimeoutMs: 20_000 }));

interface Case {
  fault: OsbFault;
  fails?: string[];
  warns?: string[];
  /** Failures reported as following from another check: id → its root cause. */
  follows?: Record<string, string>;
  skips?: string[];
  /** Instances the kit could not see removed (a broker whose polls it cannot read). Default 0. */
  leftovers?: number;
}

const cases: Case[] = [
  { fault: "no-auth", fails: ["osb-auth.no-credentials", "osb-auth.wrong-password"], follows: { "osb-auth.wrong-password": "osb-auth.no-credentials" } },
  {
    fault: "catalog-no-plans",
    fails: ["osb-catalog.shape"],
    // Without a plan nothing can be provisioned: the checks that need one are skipped.
    skips: [
      "osb-catalog.stable-ids",
      "osb-provision.sync",
      "osb-provision.async",
      "osb-provision.identical",
      "osb-provision.conflict",
      "osb-provision.malformed",
      "osb-last-operation.states",
      "osb-last-operation.gone",
      "osb-binding.created",
      "osb-binding.identical",
      "osb-binding.conflict",
      "osb-binding.unbind",
      "osb-binding.unbind-gone",
      "osb-deprovision.status",
    ],
  },
  { fault: "unstable-ids", fails: ["osb-catalog.stable-ids"] },
  { fault: "any-version", warns: ["osb-version.unsupported"] },
  { fault: "async-without-accepts", fails: ["osb-provision.sync"] },
  { fault: "wrong-async-code", fails: ["osb-provision.sync"] },
  { fault: "identical-201", warns: ["osb-provision.identical"] },
  { fault: "conflict-accepted", fails: ["osb-provision.conflict"] },
  { fault: "malformed-accepted", fails: ["osb-provision.malformed"] },
  {
    fault: "bad-state",
    // Its deprovisions answer 202, then a state the kit cannot read: it says so.
    leftovers: 2,
    fails: ["osb-provision.async", "osb-last-operation.states"],
    follows: { "osb-last-operation.states": "osb-provision.async" },
    skips: [
      "osb-provision.identical",
      "osb-provision.conflict",
      "osb-last-operation.gone",
      "osb-binding.created",
      "osb-binding.identical",
      "osb-binding.conflict",
      "osb-binding.unbind",
      "osb-binding.unbind-gone",
      "osb-deprovision.status",
    ],
  },
  // The kit cannot see the small plan's instance removed either: it says so.
  { fault: "deprovision-poll-404", fails: ["osb-last-operation.gone"], leftovers: 1 },
  { fault: "binding-without-credentials", fails: ["osb-binding.created"], skips: ["osb-binding.identical", "osb-binding.conflict", "osb-binding.unbind", "osb-binding.unbind-gone"] },
  { fault: "binding-identical-201", warns: ["osb-binding.identical"] },
  { fault: "binding-conflict-accepted", fails: ["osb-binding.conflict"] },
  { fault: "unbind-missing-200", fails: ["osb-binding.unbind-gone"] },
  { fault: "deprovision-missing-200", fails: ["osb-deprovision.gone"] },
  { fault: "text-errors", fails: ["osb-errors.body"] },
];

describe("check --osb", () => {
  it("passes a broker that keeps every rule, and removes what it made", async () => {
    const report = await check();
    expect(ids(report, "fail")).toEqual([]);
    expect(ids(report, "warn")).toEqual([]);
    expect(ids(report, "skip")).toEqual([]);
    expect(report).toMatchObject({ passed: true, protocol: "osb", leftovers: [] });
    expect(formatTree(report)).toContain("as an Open Service Broker (API 2.17");
    expect(formatJunit(report)).toContain('<testsuite name="conformance.osb-provision"');
  });

  it.each(cases)("gives $fault its verdict", async ({ fault, fails = [], warns = [], follows = {}, skips = [], leftovers = 0 }) => {
    const report = await check(fault);
    expect(ids(report, "fail").sort()).toEqual([...fails].sort());
    expect(ids(report, "warn").sort()).toEqual([...warns].sort());
    expect(ids(report, "skip").sort()).toEqual([...skips].sort());
    const followers = Object.fromEntries(report.results.filter((result) => result.followsFrom).map((result) => [result.id, result.followsFrom]));
    expect(followers).toEqual(follows);
    expect(report.passed).toBe(fails.length === 0);
    expect(report.leftovers).toHaveLength(leftovers);
  });
});
