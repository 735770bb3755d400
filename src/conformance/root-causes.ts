/**
 * One fault often breaks several checks (a route answering 405 fails its own check, the 404
 * probe of that route and the no-405 rule). A failure or warning whose evidence is answers
 * another failed check already rests on, and which the catalog says may follow from that
 * check, is marked as following from it: reports show the root cause once.
 */
import { checkById } from "./checks.js";
import { answerKey } from "./evidence.js";
import type { CheckResult } from "./types.js";

const SEVERITY = { fail: 2, warn: 1, skip: 0, pass: 0 } as const;

/** Sets `followsFrom` on results that repeat an earlier root cause. `results` are in catalog order. */
export function linkRootCauses(results: CheckResult[]): void {
  const byId = new Map(results.map((result) => [result.id, result]));
  const earlier: CheckResult[] = [];
  for (const result of results) {
    if (SEVERITY[result.outcome] === 0) continue;
    const allowed = checkById(result.id).followsFrom;
    const keys = result.exchanges.map(answerKey);
    const cause =
      allowed && keys.length > 0
        ? earlier.find((candidate) => {
            if (allowed !== "any" && !allowed.includes(candidate.id)) return false;
            const covered = new Set(candidate.exchanges.map(answerKey));
            return keys.every((key) => covered.has(key));
          })
        : undefined;
    // The cause's own root, when the cause itself follows from another check.
    const root = cause?.followsFrom ? byId.get(cause.followsFrom) : cause;
    // A MUST failure never hides behind a warning.
    if (root && SEVERITY[root.outcome] >= SEVERITY[result.outcome]) result.followsFrom = root.id;
    earlier.push(result);
  }
}

/** The failures and warnings that are root causes, failures first. */
export function rootCauses(results: readonly CheckResult[]): CheckResult[] {
  const own = results.filter((result) => (result.outcome === "fail" || result.outcome === "warn") && !result.followsFrom);
  return [...own.filter((result) => result.outcome === "fail"), ...own.filter((result) => result.outcome === "warn")];
}
