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
  /** A member failed because of the root (the kit's own calls made it so): the root stays the root. */
  causal?: true;
}

/** Sets `followsFrom` (the root cause's id) on every failure or warning that is not a root cause. `results` are in catalog order. */
export function linkRootCauses(results: CheckResult[]): void {
  const faults: Fault[] = [];
  // The checks that follow a shared answer come later, and those the run tied to a cause last:
  // every check they may follow has its fault by then.
  const rank = (result: CheckResult) => (result.followsFrom ? 2 : checkById(result.id).followsSharedAnswer ? 1 : 0);
  const ordered = [0, 1, 2].flatMap((step) => results.filter((result) => rank(result) === step));
  for (const result of ordered) {
    if (SEVERITY[result.outcome] === 0) continue;
    // Set by the run: the kit's own calls turned that check's fault into this failure. The cause leads.
    const cause = result.followsFrom && faults.find((fault) => fault.members.some((member) => member.id === result.followsFrom));
    if (cause) {
      cause.members.push(result);
      cause.causal = true;
      continue;
    }
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
    // A MUST failure never hides behind a warning (the most severe member leads), but for a cause.
    if (!fault.causal && SEVERITY[result.outcome] > SEVERITY[fault.root.outcome]) fault.root = result;
  }
  for (const { root, members } of faults) {
    for (const member of members) {
      if (member === root) delete member.followsFrom;
      else member.followsFrom = root.id;
    }
  }
}

/**
 * The root causes: the check leading each fault, split by what the fault does to the run. A fault
 * `failing` the run has a failure (its root, or one that follows from it: a warning that caused a
 * failure counts here); a `warning` fault is warnings only, a SHOULD the run passes with.
 */
export function rootCauses(results: readonly CheckResult[]): { failing: CheckResult[]; warning: CheckResult[] } {
  const own = results.filter((result) => (result.outcome === "fail" || result.outcome === "warn") && !result.followsFrom);
  const fails = (root: CheckResult) => root.outcome === "fail" || results.some((result) => result.followsFrom === root.id && result.outcome === "fail");
  return { failing: own.filter(fails), warning: own.filter((root) => !fails(root)) };
}
