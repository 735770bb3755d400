/** The terminal report: checks grouped, one line each, with the evidence under each failure. */
import { formatCitation } from "../checks.js";
import type { CheckResult, ConformanceReport, Outcome } from "../types.js";
import { exchangeLines } from "./exchange.js";

export interface TreeOptions {
  /** ANSI colours (the CLI turns them on for a terminal). Default false. */
  color?: boolean;
}

const MARK: Record<Outcome, string> = { pass: "✓ pass", fail: "✗ FAIL", warn: "! warn", skip: "- skip" };
const COLOR: Record<Outcome, string> = { pass: "32", fail: "31", warn: "33", skip: "90" };

export function formatTree(report: ConformanceReport, options: TreeOptions = {}): string {
  const paint = (outcome: Outcome, text: string) => (options.color ? `\u001b[${COLOR[outcome]}m${text}\u001b[0m` : text);
  const width = Math.max(...report.results.map((result) => result.id.length));
  const lines = [
    `Conformance of ${report.url} (variant ${report.variant}, ${report.encoding} bodies, instance ${report.instance})`,
  ];
  for (const [group, results] of groupBy(report.results)) {
    lines.push("", group);
    for (const result of results) {
      lines.push(`  ${paint(result.outcome, MARK[result.outcome])}  ${result.level.padEnd(6)} ${result.id.padEnd(width)}  ${result.title}`);
      lines.push(...details(result).map((line) => `      ${line}`));
    }
  }
  lines.push("", summary(report));
  if (report.leftovers.length > 0) {
    lines.push(`Could not remove ${report.leftovers.join(", ")}: remove ${report.leftovers.length > 1 ? "them" : "it"} by hand.`);
  }
  return `${lines.join("\n")}\n`;
}

function details(result: CheckResult): string[] {
  if (result.outcome === "pass") return [];
  const lines = result.detail ? [result.detail] : [];
  if (result.outcome === "skip") return lines;
  lines.push(`rule:     ${formatCitation(result.cite)}`);
  for (const exchange of result.exchanges) lines.push(...exchangeLines(exchange));
  return lines;
}

function summary(report: ConformanceReport): string {
  const { pass, fail, warn, skip } = report.counts;
  const verdict = report.interrupted ? "INTERRUPTED" : report.passed ? "PASSED" : "FAILED";
  return `${verdict}: ${pass} passed, ${fail} failed, ${warn} warned, ${skip} skipped`;
}

function groupBy(results: readonly CheckResult[]): Map<string, CheckResult[]> {
  const groups = new Map<string, CheckResult[]>();
  for (const result of results) groups.set(result.group, [...(groups.get(result.group) ?? []), result]);
  return groups;
}
