/**
 * The kit's own output: the tree a person reads, the JUnit file CI reads, the JSON tools read.
 * None of them may carry a secret: the password, the Authorization header, bind result values.
 */
import { describe, expect, it } from "vitest";
import { UNPRINTED } from "../../../../test/support/unprinted.js";
import {
  CHECKS,
  formatCheckTable,
  formatCitation,
  formatJson,
  formatJunit,
  formatTree,
  OSB_CHECKS,
  runConformance,
  type ConformanceReport,
} from "../../src/conformance/index.js";
import { readFile } from "node:fs/promises";
import express from "express";
import { CREDENTIALS, normalise, resultOf, serving } from "./helpers.js";
import { adviceLine, CONTRACT_SECTIONS } from "../../src/conformance/checks.js";
import { referenceProvider, type Fault } from "./reference-provider.js";
import { parseXmlElements } from "./xml.js";

/** A failing run with synchronous provisioning, so the evidence is the same on every run. */
async function failingRun(fault: Fault): Promise<ConformanceReport> {
  return serving(referenceProvider({ ...CREDENTIALS, fault }), ({ url }) => runConformance({ url, ...CREDENTIALS }));
}

/** What must never appear in any report: the password and the values the provider bound. */
function secretsIn(text: string): string[] {
  const base64Credentials = Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64");
  // REF_PASSWORD values are random per binding: none may show, so no quoted string follows the name.
  return [CREDENTIALS.password, base64Credentials, "ref://", '"REF_PASSWORD":"'].filter((secret) => text.includes(secret));
}

describe("the reports", () => {
  it("tree: grouped, one line per check, and under a failure the rule, what was sent and what came back", async () => {
    const report = await failingRun("numeric-env");
    expect(normalise(formatTree(report))).toMatchSnapshot();
  });

  it("tree: shows a redirect's target and the checks skipped because of it", async () => {
    const tree = normalise(formatTree(await failingRun("info-redirect")));
    expect(tree).toContain("received: 302 (Location: /resources/pkc-<id>-conformance/info)");
    expect(tree).toContain("needs info.status, which failed");
    expect(tree).toMatch(/FAILED: \d+ passed, 3 failed, 0 warned, \d+ skipped\n$/);
  });

  it("no report format carries the password, the Authorization header or a bind result value", async () => {
    for (const fault of ["numeric-env", "no-auth", "unbind-gone-404"] as const) {
      const report = await failingRun(fault);
      const trees = [formatTree(report), formatTree(report, { verbose: true })];
      for (const text of [...trees, formatJson(report), formatJunit(report)]) expect(secretsIn(text)).toEqual([]);
      expect(trees[1]).toContain("Authorization: Basic <redacted>");
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
      cite: { file: "docs/contract.md", line: expect.any(Number), quote: "A create for a name that already exists answers 409" },
      detail: "POST /resources answered 500, expected 409 (already exists)",
    });
  });

  it("tree: the duration and the root causes first; a failure that follows from another is one line", async () => {
    const report = await failingRun("update-405");
    const tree = normalise(formatTree(report));
    const [header, ...rest] = tree.split("\n\nauth\n");
    expect(header).toContain(`Ran ${report.results.length} checks in <seconds> s.`);
    expect(header).toContain("Root causes: 1 (1 failing the run; 2 other results follow from them)");
    expect(header).toContain(
      "✗ FAIL  update.status: PUT /resources/pkc-<id>-conformance answered 405, expected 2xx, or 404 when not supported (405 means the provider does not serve PUT on /resources/<instance>) [also: not-found.update, transport.no-405]",
    );
    expect(rest.join("")).toMatch(/not-found\.update +PUT \/resources\/<instance> of an unknown instance answers 404\n {6}follows from update\.status \(--verbose shows the evidence\)\n/);
  });

  it("tree: a fault of warnings only is counted as such, not as a failure", async () => {
    const report = await failingRun("json-as-html");
    expect(report.passed).toBe(true);
    const header = normalise(formatTree(report)).split("\n\nauth\n")[0]!;
    expect(header).toContain("Root causes: 1 (1 warning only: the run passes)\n  ! warn  transport.json-content-type: ");
  });

  it("tree: one screen per failure by default, every exchange with --verbose", async () => {
    const report = await failingRun("not-found-pages");
    const block = (tree: string) => tree.slice(tree.indexOf("errors.plain-text  "), tree.indexOf("\n\ntransport"));
    const brief = block(formatTree(report)).split("\n");
    const verbose = block(formatTree(report, { verbose: true })).split("\n");
    const exchanges = resultOf(report, "errors.plain-text").exchanges.length;
    expect(exchanges).toBeGreaterThan(5);
    // The check line, the detail, what to change, the rule, one exchange (4 lines), the count of the others.
    expect(brief).toHaveLength(9);
    expect(brief[8]).toBe(`      (${exchanges - 1} more exchanges: --verbose shows them)`);
    expect(verbose.filter((line) => line.includes("received:"))).toHaveLength(exchanges);
  });

  it("a fresh name refused as taken shows the provider's answer in every format, JSON included", async () => {
    const report = await failingRun("names-cut-at-10");
    const refusal = "An instance with this name already exists.";
    const second = `${report.instance}-2`;
    const json = JSON.parse(formatJson(report)) as ConformanceReport;
    expect(json.results.find((result) => result.id === "create.fresh-name")).toMatchObject({
      outcome: "fail",
      exchanges: [{ method: "POST", path: "/resources", requestBody: expect.stringContaining(`name=${second}&`), response: { status: 409, body: refusal } }],
    });
    const tree = formatTree(report);
    const block = tree.slice(tree.indexOf("create.fresh-name  "), tree.indexOf("create.duplicate  "));
    expect(block).toContain("received: 409 (text/plain; charset=utf-8)");
    expect(block).toContain(refusal);
    const junit = formatJunit(report);
    const testCase = junit.slice(junit.indexOf('<testcase name="create.fresh-name [MUST]"'));
    expect(testCase.slice(0, testCase.indexOf("</testcase>"))).toContain(`received: 409 (text/plain; charset=utf-8)\n          ${refusal}`);
  });

  it("shows what the provider wrote printable in every format: no terminal control, bidi or zero-width character reaches the reader", async () => {
    const hostile = "\u001b[2Jcleared\u0007 \u009b31m \u202eevil\u202c zero\u200bwidth\ufeff\r";
    // The reference provider, its plans and status answered with terminal controls.
    const app = express();
    app.get("/resources/plans", (_req, res) => void res.status(500).type("text/plain").send(hostile));
    app.get("/resources/:name/status", (_req, res) => void res.status(500).type("text/plain").send(hostile));
    app.use(referenceProvider(CREDENTIALS));
    const report = await serving(app, ({ url }) => runConformance({ url, ...CREDENTIALS }));
    const tree = formatTree(report);
    expect(tree).toContain("\\u001b[2Jcleared\\u0007 \\u009b31m \\u202eevil\\u202c zero\\u200bwidth\\ufeff\\u000d");
    for (const text of [tree, formatTree(report, { verbose: true }), formatJunit(report), formatJson(report)]) expect(text).not.toMatch(UNPRINTED);
  });

  it("no report format shows the password in any encoding an answer echoes it in, and transport.no-secret names the form", async () => {
    const password = "pa/ss+word? 100%";
    const forms = [
      password,
      encodeURIComponent(password),
      encodeURIComponent(password).toLowerCase(),
      new URLSearchParams({ p: password }).toString().slice(2),
      Buffer.from(`${CREDENTIALS.username}:${password}`).toString("base64"),
      Buffer.from(password).toString("base64"),
      JSON.stringify(password).slice(1, -1).replaceAll("/", "\\/"),
    ];
    // The reference provider, its plans failing with a page that repeats the password in every form.
    const app = express();
    app.get("/resources/plans", (_req, res) => void res.status(500).type("text/plain").send(`could not log in: ${forms.join(" ")}`));
    app.use(referenceProvider({ ...CREDENTIALS, password }));
    const report = await serving(app, ({ url }) => runConformance({ url, ...CREDENTIALS, password }));
    const disclosed = resultOf(report, "transport.no-secret");
    expect(disclosed.outcome).toBe("fail");
    expect(disclosed.detail).toMatch(/answered 500 with the (password|Basic credentials)/);
    for (const text of [formatTree(report), formatTree(report, { verbose: true }), formatJson(report), formatJunit(report)]) {
      expect(forms.filter((form) => text.includes(form))).toEqual([]);
    }
    expect(formatTree(report, { verbose: true })).toContain("<redacted: the password (URL-encoded)>");
  });

  it("says when a plan cannot be sent: Variant B creates without one", async () => {
    const report = await serving(referenceProvider(CREDENTIALS), ({ url }) => runConformance({ url, ...CREDENTIALS, variant: "B", plan: "dedicated" }));
    const note = 'The plan "dedicated" was not sent: Variant B creates instances with the name only.';
    expect(report.notes).toEqual([note]);
    expect(formatTree(report)).toContain(`\nNote: ${note}\n`);
    expect(JSON.parse(formatJson(report))).toMatchObject({ notes: [note] });
    const onA = await serving(referenceProvider(CREDENTIALS), ({ url }) => runConformance({ url, ...CREDENTIALS, variant: "A", plan: "small", groups: ["create"] }));
    expect(onA.notes).toEqual([]);
  });

  it("every check cites a line of docs/contract.md that holds its quote", async () => {
    const lines = (await readFile(new URL("../../../../docs/contract.md", import.meta.url), "utf8")).split("\n");
    for (const check of CHECKS) {
      expect(check.cite.file).toBe("docs/contract.md");
      expect(lines[check.cite.line - 1], `${check.id} cites line ${check.cite.line}`).toContain(check.cite.quote);
    }
  });

  it("every check's section is the heading of docs/contract.md above its line, and every check says what to change", async () => {
    const lines = (await readFile(new URL("../../../../docs/contract.md", import.meta.url), "utf8")).split("\n");
    for (const [line, name] of CONTRACT_SECTIONS) expect(lines[line - 1], `section "${name}" at line ${line}`).toMatch(new RegExp(`^#+ ${name.replace(/[()]/g, "\\$&")}`));
    for (const check of CHECKS) {
      const heading = lines.slice(0, check.cite.line - 1).findLast((text) => /^###? /.test(text));
      expect(heading, check.id).toMatch(new RegExp(`^#+ ${check.cite.section}`));
      expect(check.advice, check.id).toMatch(/^[A-Z].{20,200}[^.]$/);
    }
  });

  it("docs/conformance-checks.md is the generated check table", async () => {
    const docs = await readFile(new URL("../../../../docs/conformance-checks.md", import.meta.url), "utf8");
    expect(docs).toContain(formatCheckTable());
  });

  it("docs/osb-checks.md is the generated table of the OSB checks", async () => {
    const docs = await readFile(new URL("../../../../docs/osb-checks.md", import.meta.url), "utf8");
    expect(docs).toContain(formatCheckTable(OSB_CHECKS));
  });

  it("every OSB check says what to change in one line, written as the native checks' advice is", () => {
    for (const check of OSB_CHECKS) expect(check.advice, check.id).toMatch(/^[A-Z].{20,200}[^.]$/);
  });

  it("cites OSB's spec where anyone opens it: a link to the line at v2.17 (no copy is shipped)", () => {
    const check = OSB_CHECKS[0]!;
    const url = `https://github.com/openservicebrokerapi/servicebroker/blob/v2.17/spec.md#L${check.cite.line}`;
    expect(adviceLine(check)).toBe(`${check.advice} (OSB v2.17: ${check.cite.section}, ${url})`);
    expect(formatCitation(check.cite)).toBe(`${url} "${check.cite.quote}"`);
  });
});
