/** Shared by the conformance kit's tests: providers on loopback, and report shorthands. */
import type { Express } from "express";
import type { ConformanceOptions, ConformanceReport, Outcome } from "../../src/conformance/index.js";
import { listen, type Listening } from "./reference-provider.js";

/** The password has colons on purpose: the kit must send it whole (split on the first colon). */
export const CREDENTIALS = { username: "pkc-service", password: "s3cret:with:colons" };

/**
 * How long the test providers take to provision: long enough that the kit's first status call
 * and its bind both land while provisioning, even on a slow, busy CI machine.
 */
export const PROVISION_MS = 800;

/** Fast polling (the test providers provision in under a second), and one quick retry of a failed cleanup. */
export const FAST: Partial<ConformanceOptions> = { pollIntervalMs: 50, provisionTimeoutMs: 20_000, cleanupRetryDelaysMs: [10] };

export function ids(report: ConformanceReport, outcome: Outcome): string[] {
  return report.results.filter((result) => result.outcome === outcome).map((result) => result.id);
}

export function resultOf(report: ConformanceReport, id: string) {
  const result = report.results.find((candidate) => candidate.id === id);
  if (!result) throw new Error(`No result for ${id} in the report.`);
  return result;
}

/** Runs `work` against `app` listening on a free loopback port, then stops it. */
export async function serving<T>(app: Express, work: (provider: Listening) => Promise<T>): Promise<T> {
  const provider = await listen(app);
  try {
    return await work(provider);
  } finally {
    await provider.close();
  }
}

/** The status the provider gives for an instance, asked the way the platform asks. */
export async function statusOf(url: string, instance: string, credentials = CREDENTIALS): Promise<number> {
  const auth = Buffer.from(`${credentials.username}:${credentials.password}`).toString("base64");
  const response = await fetch(`${url}/resources/${instance}/status`, { headers: { Authorization: `Basic ${auth}` } });
  await response.arrayBuffer();
  return response.status;
}

/** Random parts of a report (ports, instance names, event ids) made stable for snapshots. */
export function normalise(text: string): string {
  return text
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>")
    .replace(/pkc-missing-[0-9a-f]{10}/g, "pkc-missing-<id>")
    .replace(/pkc-[0-9a-f]{10}/g, "pkc-<id>")
    .replace(/eventid=[0-9a-f]{24}/g, "eventid=<eventid>")
    .replace(/checks in \d+\.\d s\./, "checks in <seconds> s.")
    // The contract is cited from the working directory: the package's own (npm test in packages/conformance) or the root.
    .replace(/(?:\.\.\/)+docs\/contract\.md/g, "docs/contract.md");
}
