/**
 * JUnit XML for CI: one test suite per group, one test case per check. JUnit has no "warning":
 * a warning (a SHOULD that does not hold, or a problem the platform copes with) is a passing case
 * whose system-out says so.
 */
import { printable } from "provider-kit/contract";
import { formatCitation } from "../checks.js";
import type { CheckResult, ConformanceReport } from "../types.js";
import { exchangeLines } from "./exchange.js";

export function formatJunit(report: ConformanceReport): string {
  const groups = new Map<string, CheckResult[]>();
  for (const result of report.results) groups.set(result.group, [...(groups.get(result.group) ?? []), result]);
  const suites = [...groups].map(([group, results]) => {
    const count = (outcome: CheckResult["outcome"]) => results.filter((result) => result.outcome === outcome).length;
    const cases = results.map(testCase).join("\n");
    return `  <testsuite name="${attr(`conformance.${group}`)}" tests="${results.length}" failures="${count("fail")}" errors="0" skipped="${count("skip")}">\n${cases}\n  </testsuite>`;
  });
  const { fail, skip } = report.counts;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${attr(report.protocol === "osb" ? "provider-kit conformance (Open Service Broker API 2.17)" : `provider-kit conformance (variant ${report.variant}, ${report.encoding})`)}" tests="${report.results.length}" failures="${fail}" errors="0" skipped="${skip}" time="${(report.durationMs / 1000).toFixed(3)}">`,
    ...suites,
    `</testsuites>`,
    "",
  ].join("\n");
}

function testCase(result: CheckResult): string {
  const open = `    <testcase name="${attr(`${result.id} [${result.level}]`)}" classname="${attr(`conformance.${result.group}`)}"`;
  const evidence = [
    ...(result.followsFrom ? [`follows from ${result.followsFrom}`] : []),
    result.detail ?? "",
    ...(result.advice ? [`change: ${result.advice}`] : []),
    `rule: ${formatCitation(result.cite)}`,
    ...result.exchanges.flatMap((exchange) => exchangeLines(exchange)),
  ].join("\n");
  switch (result.outcome) {
    case "pass":
      return `${open}/>`;
    case "skip":
      return `${open}>\n      <skipped message="${attr(result.detail ?? "skipped")}"/>\n    </testcase>`;
    case "warn":
      return `${open}>\n      <system-out>${text(`WARNING (does not fail the run): ${evidence}`)}</system-out>\n    </testcase>`;
    case "fail":
      return `${open}>\n      <failure message="${attr(result.detail ?? result.title)}" type="${result.level}">${text(evidence)}</failure>\n    </testcase>`;
  }
}

/** XML 1.0 has no way to carry most control characters, and CI pages show the text to people: escaped, as on the terminal. */
function text(value: string): string {
  return printable(value, { lines: true }).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function attr(value: string): string {
  return text(value).replace(/"/g, "&quot;").replace(/\n/g, "&#10;");
}
