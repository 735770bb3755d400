/**
 * The terminal report: the run's duration and its root causes first, then the checks grouped,
 * one line each, with the evidence under each failure or warning. By default a failure shows
 * its first exchange only and a failure that follows from another shows one line: one screen
 * per failure. `verbose` shows every exchange. Everything it quotes is made printable: a
 * provider's answer never drives the terminal.
 */
import { printable } from "provider-kit/contract";
import { formatCitation } from "../checks.js";
import { rootCauses } from "../root-causes.js";
import type { CheckResult, ConformanceReport, Outcome } from "../types.js";
import { exchangeLines } from "./exchange.js";

export interface TreeOptions {
  /** ANSI colours (the CLI turns them on for a terminal). Default false. */
  color?: boolean;
  /** Every exchange of every failure and warning, bodies as recorded. Default false. */
  verbose?: boolean;
}

const MARK: Record<Outcome, string> = { pass: "✓ pass", fail: "✗ FAIL", warn: "! warn", skip: "- skip" };
const COLOR: Record<Outcome, string> = { pass: "32", fail: "31", warn: "33", skip: "90" };

export function formatTree(report: ConformanceReport, options: TreeOptions = {}): string {
  const paint = (outcome: Outcome, text: string) => (options.color ? `\u001b[${COLOR[outcome]}m${text}\u001b[0m` : text);
  const width = Math.max(...report.results.map((result) => result.id.length));
  const lines = [
    report.protocol === "osb"
      ? `Conformance of ${report.url} as an Open Service Broker (API 2.17, instance ${report.instance})`
      : `Conformance of ${report.url} (variant ${report.variant}, ${report.encoding} bodies, instance ${report.instance})`,
    `Ran ${report.results.length} checks in ${(report.durationMs / 1000).toFixed(1)} s.`,
    ...report.notes.map((note) => `Note: ${quoted(note)}`),
    ...rootCauseLines(report, paint),
  ];
  for (const [group, results] of groupBy(report.results)) {
    lines.push("", group);
    for (const result of results) {
      lines.push(`  ${paint(result.outcome, MARK[result.outcome])}  ${result.level.padEnd(6)} ${result.id.padEnd(width)}  ${result.title}`);
      lines.push(...details(result, options.verbose === true).map((line) => `      ${line}`));
    }
  }
  lines.push("", summary(report));
  for (const { instance, binding, reason, removeWith } of report.leftovers) {
    lines.push(quoted(`Could not remove ${binding === undefined ? instance : `binding ${binding} of ${instance}`} (${reason}): remove it with ${removeWith}, or by hand.`));
  }
  return `${lines.join("\n")}\n`;
}

/**
 * "Root causes: 2 (1 failing the run; 1 warning only; 3 other results follow from them)" and one
 * line per cause, those failing the run first: a count alone would read as failures.
 */
function rootCauseLines(report: ConformanceReport, paint: (outcome: Outcome, text: string) => string): string[] {
  const { failing, warning } = rootCauses(report.results);
  const roots = [...failing, ...warning];
  if (roots.length === 0) return [];
  const following = (root: CheckResult) => report.results.filter((result) => result.followsFrom === root.id).map((result) => result.id);
  const followers = report.results.filter((result) => result.followsFrom).length;
  const said = [
    failing.length > 0 ? `${failing.length} failing the run` : undefined,
    warning.length > 0 ? `${warning.length} ${warning.length > 1 ? "warnings" : "warning"} only${failing.length === 0 ? ": the run passes" : ""}` : undefined,
    followers > 0 ? `${followers} other ${followers > 1 ? "results follow" : "result follows"} from them` : undefined,
  ].filter((part) => part !== undefined);
  return [
    "",
    `Root causes: ${roots.length} (${said.join("; ")})`,
    ...roots.map((root) => {
      const also = following(root);
      return `  ${paint(root.outcome, MARK[root.outcome])}  ${root.id}: ${quoted(root.detail ?? root.title)}${also.length > 0 ? ` [also: ${also.join(", ")}]` : ""}`;
    }),
  ];
}

function details(result: CheckResult, verbose: boolean): string[] {
  if (result.outcome === "pass") return [];
  const lines = result.detail ? [quoted(result.detail)] : [];
  if (result.outcome === "skip") return lines;
  if (result.followsFrom && !verbose) return [`follows from ${result.followsFrom} (--verbose shows the evidence)`];
  if (result.followsFrom) lines.unshift(`follows from ${result.followsFrom}`);
  if (result.advice) lines.push(`change:   ${result.advice}`);
  lines.push(`rule:     ${formatCitation(result.cite)}`);
  const shown = verbose ? result.exchanges : result.exchanges.slice(0, 1);
  for (const exchange of shown) lines.push(...exchangeLines(exchange, { brief: !verbose }));
  const hidden = result.exchanges.length - shown.length;
  if (hidden > 0) lines.push(`(${hidden} more exchange${hidden > 1 ? "s" : ""}: --verbose shows them)`);
  return lines;
}

/** A check's words may quote the provider: shown as lines, controls escaped. */
function quoted(text: string): string {
  return printable(text, { lines: true });
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
