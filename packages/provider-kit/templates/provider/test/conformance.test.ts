/**
 * provider-kit's conformance kit against this provider: every call the platform makes, in each
 * generation of the platform and each body encoding, must be answered as the platform expects.
 */
import { runConformance, type Encoding, type Variant } from "@provider-kit/conformance";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { credentials, serve, type RunningProvider } from "./serve.js";

let provider: RunningProvider;
beforeAll(async () => {
  provider = await serve();
});
afterAll(async () => {
  await provider.stop();
});

const runs: [Variant, Encoding][] = [
  ["current", "form"],
  ["current", "json"],
  ["A", "form"],
  ["B", "form"],
];

describe("conformance", () => {
  it.each(runs)("passes every MUST check of variant %s with %s bodies", async (variant, encoding) => {
    const report = await runConformance({ url: provider.url, ...credentials, variant, encoding });
    const failures = report.results
      .filter((result) => result.outcome === "fail")
      .map((result) => `${result.id}: ${result.detail ?? result.title}`);
    expect(failures).toEqual([]);
    expect(report.passed).toBe(true);
    expect(report.leftovers).toEqual([]);
  }, 120_000);
});
