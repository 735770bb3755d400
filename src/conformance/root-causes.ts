/**
 * One fault often breaks several checks (a route answering 405 fails its own check, the 404
 * probe of that route and the no-405 rule; a provider that never looks the instance up fails
 * every unknown-instance probe). Results are grouped by fault: a failure or warning joins a
 * group when the catalog says it may follow from one of the group's checks and the group's
 * answers already hold all of its own (same route, status and body), or when it belongs to the
 * same family of checks (`family` in the catalog). Each group is reported once, under its most
 * severe, earliest check: the root cause.
 */
import { checkById } from "./checks.js";
import { faultKey } from "./evidence.js";
import type { CheckResult } from "./types.js";

const SEVERITY = { fail: 2, warn: 1, skip: 0, pass: 0 } as const;

interface Fault {
  root: CheckResult;
  members: CheckResult[];
  /** The fault keys of every member's answers. */
  answers: Set<string>;
  /** Set when the group was started by a check of a family: later failures of that family join it. */
  family?: string;
}

/** Sets `followsFrom` (the root cause's id) on every failure or warning that is not a root cause. `results` are in catalog order. */
export function linkRootCauses(results: CheckResult[]): void {
  const faults: Fault[] = [];
  // The checks that follow a shared answer come last: every check that may list it has its fault by then.
  const sharedLast = [...results.filter((result) => !checkById(result.id).followsSharedAnswer), ...results.filter((result) => checkById(result.id).followsSharedAnswer)];
  for (const result of sharedLast) {
    if (SEVERITY[result.outcome] === 0) continue;
    const check = checkById(result.id);
    const keys = result.exchanges.map(faultKey);
    const allowed = check.followsFrom;
    const sameAnswers = (fault: Fault) =>
      allowed !== undefined &&
      keys.length > 0 &&
      (allowed === "any" || fault.members.some((member) => allowed.includes(member.id))) &&
      keys.every((key) => fault.answers.has(key));
    const sharedAnswer = (fault: Fault) => check.followsSharedAnswer === true && keys.some((key) => fault.answers.has(key));
    const fault =
      faults.find(sameAnswers) ??
      faults.find(sharedAnswer) ??
      (check.family ? faults.find((candidate) => candidate.family === check.family) : undefined);
    if (!fault) {
      faults.push({ root: result, members: [result], answers: new Set(keys), family: check.family });
      continue;
    }
    fault.members.push(result);
    for (const key of keys) fault.answers.add(key);
    // A MUST failure never hides behind a warning: the most severe member leads.
    if (SEVERITY[result.outcome] > SEVERITY[fault.root.outcome]) fault.root = result;
  }
  for (const { root, members } of faults) {
    for (const member of members) {
      if (member === root) delete member.followsFrom;
      else member.followsFrom = root.id;
    }
  }
}

/** The failures and warnings that are root causes, failures first. */
export function rootCauses(results: readonly CheckResult[]): CheckResult[] {
  const own = results.filter((result) => (result.outcome === "fail" || result.outcome === "warn") && !result.followsFrom);
  return [...own.filter((result) => result.outcome === "fail"), ...own.filter((result) => result.outcome === "warn")];
}
