/**
 * The kit's own output: the tree a person reads, the JUnit file CI reads, the JSON tools read.
 * None of them may carry a secret: the password, the Authorization header, bind result values.
 */
import { describe, expect, it } from "vitest";
import {
  formatCheckTable,
  formatJson,
  formatJunit,
  formatTree,
  runConformance,
  type ConformanceReport,
} from "../../src/conformance/index.js";
import { readFile } from "node:fs/promises";
import { CREDENTIALS, normalise, serving } from "./helpers.js";
import { referenceProvider, type Fault } from "./reference-provider.js";
import { parseXmlElements } from "./xml.js";

/** A failing run with synchronous provisioning, so the evidence is the same on every run. */
async function failingRun(fault: Fault): Promise<ConformanceReport> {
  return serving(referenceProvider({ ...CREDENTIALS, fault }), ({ url }) => runConformance({ url, ...CREDENTIALS }));
}

/** What must never appear in any report: the password and the values the provider bound. */
function secretsIn(text: string): string[] {
  const base64Credentials = Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64");
  return [CREDENTIALS.password, base64Credentials, "ref://"].filter((secret) => text.includes(secret));
}

describe("the reports", () => {
  it("tree: grouped, one line per check, and under a failure the rule, what was sent and what came back", async () => {
    const report = await failingRun("numeric-env");
    expect(normalise(formatTree(report))).toMatchSnapshot();
  });

  it("tree: shows a redirect's target and the checks skipped because of it", async () => {
    const tree = normalise(formatTree(await failingRun("info-redirect")));
    expect(tree).toContain("received: 302 (Location: /resources/pkc-<id>/info)");
    expect(tree).toContain("needs info.status, which failed");
    expect(tree).toMatch(/FAILED: \d+ passed, 3 failed, 0 warned, \d+ skipped\n$/);
  });

  it("no report format carries the password, the Authorization header or a bind result value", async () => {
    for (const fault of ["numeric-env", "no-auth", "unbind-gone-404"] as const) {
      const report = await failingRun(fault);
      for (const text of [formatTree(report), formatJson(report), formatJunit(report)]) expect(secretsIn(text)).toEqual([]);
      expect(formatTree(report)).toContain("Authorization: Basic <redacted>");
    }
  });

  it("JUnit: well-formed XML, one test case per check, failures and skips marked", async () => {
    const report = await failingRun("empty-bind-body");
    const xml = formatJunit(report);
    const elements = parseXmlElements(xml);
    expect(elements[0]).toBe("testsuites");
    expect(elements.filter((name) => name === "testcase")).toHaveLength(report.results.length);
    expect(elements.filter((name) => name === "failure")).toHaveLength(report.counts.fail);
    expect(elements.filter((name) => name === "skipped")).toHaveLength(report.counts.skip);
    expect(xml).toContain('<testcase name="bind-app.json [MUST]" classname="conformance.bind-app">');
    expect(xml).toContain('<failure message="POST /resources/');
  });

  it("JSON: the whole report, parseable, with the verdict and counts", async () => {
    const report = await failingRun("duplicate-500");
    const parsed = JSON.parse(formatJson(report)) as ConformanceReport;
    expect(parsed).toMatchObject({ passed: false, variant: "current", encoding: "form", counts: { fail: 1 } });
    expect(parsed.results.find((result) => result.id === "create.duplicate")).toMatchObject({
      outcome: "fail",
      level: "MUST",
      cite: { file: "contract-notes.md", line: 37, quote: "409 = already exists" },
      detail: "POST /resources answered 500, expected 409 (already exists)",
    });
  });

  it("docs/conformance-checks.md is the generated check table", async () => {
    const docs = await readFile(new URL("../../docs/conformance-checks.md", import.meta.url), "utf8");
    expect(docs).toContain(formatCheckTable());
  });
});
