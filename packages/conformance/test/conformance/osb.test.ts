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
  /** How many of those leftovers are bindings. Default 0. */
  leftoverBindings?: number;
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
      "osb-provision.required-fields",
      "osb-last-operation.states",
      "osb-last-operation.gone",
      "osb-binding.created",
      "osb-binding.identical",
      "osb-binding.conflict",
      "osb-binding.concurrent",
      "osb-binding.unbind",
      "osb-binding.unbind-gone",
      "osb-update.parameters",
      "osb-update.plan",
      "osb-update.not-updateable",
      "osb-update.concurrent",
      "osb-deprovision.status",
    ],
  },
  { fault: "unstable-ids", fails: ["osb-catalog.stable-ids"] },
  // Refusing a version is a MAY: serving it is no finding; refusing it with another status than 412 is.
  { fault: "any-version" },
  { fault: "version-400", fails: ["osb-version.unsupported"] },
  { fault: "async-without-accepts", fails: ["osb-provision.sync"] },
  { fault: "wrong-async-code", fails: ["osb-provision.sync"] },
  { fault: "identical-201", warns: ["osb-provision.identical"] },
  { fault: "conflict-accepted", fails: ["osb-provision.conflict"] },
  { fault: "conflict-plan-only", fails: ["osb-provision.conflict"] },
  // Without a check of service_id and plan_id, no REQUIRED field is checked either.
  { fault: "malformed-accepted", fails: ["osb-provision.malformed", "osb-provision.required-fields"] },
  { fault: "required-field-accepted", fails: ["osb-provision.required-fields"] },
  { fault: "last-operation-unknown-410", fails: ["osb-last-operation.unknown"] },
  {
    fault: "bad-state",
    // Its deprovisions answer 202, then a state the kit cannot read: it says so, for the run's
    // instance and those of the two plans provisioned at once.
    leftovers: 3,
    fails: ["osb-provision.async", "osb-last-operation.states"],
    follows: { "osb-last-operation.states": "osb-provision.async" },
    skips: [
      "osb-provision.identical",
      "osb-provision.conflict",
      "osb-last-operation.gone",
      "osb-binding.created",
      "osb-binding.identical",
      "osb-binding.conflict",
      "osb-binding.concurrent",
      "osb-binding.unbind",
      "osb-binding.unbind-gone",
      "osb-update.parameters",
      "osb-update.plan",
      "osb-update.not-updateable",
      "osb-update.concurrent",
      "osb-deprovision.status",
    ],
  },
  // The kit cannot see the instances of the plans provisioned at once removed either: it says so.
  { fault: "deprovision-poll-404", fails: ["osb-last-operation.gone"], leftovers: 2 },
  {
    fault: "binding-without-credentials",
    fails: ["osb-binding.created"],
    skips: ["osb-binding.identical", "osb-binding.conflict", "osb-binding.concurrent", "osb-binding.unbind", "osb-binding.unbind-gone"],
  },
  { fault: "binding-identical-201", warns: ["osb-binding.identical"] },
  // It takes a second app's bind of one binding id whenever it comes: at once too.
  { fault: "binding-conflict-accepted", fails: ["osb-binding.conflict", "osb-binding.concurrent"] },
  { fault: "binding-plan-conflict-accepted", fails: ["osb-binding.conflict"] },
  { fault: "binding-concurrent-201", fails: ["osb-binding.concurrent"] },
  { fault: "update-params-change-plan", fails: ["osb-update.parameters"] },
  { fault: "update-plan-ignored", fails: ["osb-update.plan"], skips: ["osb-update.concurrent"] },
  { fault: "not-updateable-accepted", fails: ["osb-update.not-updateable"] },
  { fault: "update-lost", fails: ["osb-update.concurrent"] },
  { fault: "unbind-missing-200", fails: ["osb-binding.unbind-gone"] },
  // Neither the run's binding nor those of the three rounds of concurrent binds can be removed: each is named.
  { fault: "unbind-500", fails: ["osb-binding.unbind"], skips: ["osb-binding.unbind-gone"], leftovers: 4, leftoverBindings: 4 },
  { fault: "deprovision-missing-200", fails: ["osb-deprovision.gone"] },
  // A body that is not JSON is a SHOULD of the spec ("Content Type"): it warns.
  { fault: "text-errors", warns: ["osb-errors.json"] },
  { fault: "empty-error-fields", fails: ["osb-errors.body"] },
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

  it.each(cases)("gives $fault its verdict", async ({ fault, fails = [], warns = [], follows = {}, skips = [], leftovers = 0, leftoverBindings = 0 }) => {
    const report = await check(fault);
    expect(ids(report, "fail").sort()).toEqual([...fails].sort());
    expect(ids(report, "warn").sort()).toEqual([...warns].sort());
    expect(ids(report, "skip").sort()).toEqual([...skips].sort());
    const followers = Object.fromEntries(report.results.filter((result) => result.followsFrom).map((result) => [result.id, result.followsFrom]));
    expect(followers).toEqual(follows);
    expect(report.passed).toBe(fails.length === 0);
    expect(report.leftovers).toHaveLength(leftovers);
    expect(report.leftovers.filter((leftover) => leftover.binding !== undefined)).toHaveLength(leftoverBindings);
  });
});
