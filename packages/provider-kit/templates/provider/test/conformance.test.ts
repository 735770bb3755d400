/**
 * provider-kit's conformance kit against this provider: every call the platform makes, in each
 * generation of the platform and each body encoding, with an instance of every plan, and every
 * action of src/actions.ts, must be answered as the platform expects.
 */
import { runConformance, type Encoding, type Variant } from "@provider-kit/conformance";
import { actionsManifest } from "provider-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actions } from "../src/actions.js";
import { PLANS } from "../src/handlers.js";
import { credentials, serve, type RunningProvider } from "./serve.js";

let provider: RunningProvider;
beforeAll(async () => {
  provider = await serve();
});
afterAll(async () => {
  await provider.stop();
});

const platforms: [Variant, Encoding][] = [
  ["current", "form"],
  ["current", "json"],
  ["A", "form"],
  ["B", "form"],
];
interface Run {
  variant: Variant;
  encoding: Encoding;
  plan: string | undefined;
}
// Variant B creates without a plan: its instance has the default one.
const runs: Run[] = platforms.flatMap(([variant, encoding]): Run[] =>
  variant === "B" ? [{ variant, encoding, plan: undefined }] : PLANS.map((plan) => ({ variant, encoding, plan: plan.name })),
);

describe("conformance", () => {
  it.for(runs)("passes every MUST check of variant $variant with $encoding bodies, plan $plan", async ({ variant, encoding, plan }, { task }) => {
    const manifest = actionsManifest(actions);
    // The kit waits for a create finished in the background for up to half the test's time
    // (vitest.config.ts's testTimeout), keeping the rest for the checks after it.
    const provisionTimeoutMs = task.timeout / 2;
    const report = await runConformance({ url: provider.url, ...credentials, variant, encoding, plan, manifest, pollIntervalMs: 100, provisionTimeoutMs });
    const failures = report.results
      .filter((result) => result.outcome === "fail")
      .map((result) => `${result.id}: ${result.detail ?? result.title}\n  change: ${result.advice}`);
    expect(failures).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.leftovers).toEqual([]);
    // The actions are checked, not skipped (today's platform is the one with actions).
    const actionOutcomes = report.results.filter((result) => result.group === "actions").map((result) => result.outcome);
    expect(actionOutcomes).toEqual(variant === "current" ? ["pass", "pass", "pass", "pass"] : []);
  });
});
