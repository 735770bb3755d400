/**
 * Turns verdicts into check results: applies the level (a SHOULD that does not hold warns),
 * skips a check whose dependencies did not pass, and keeps only the checks that were asked for.
 */
import { adviceLine, checkById, checksFor, levelIn, WHOLE_RUN_GROUPS } from "./checks.js";
import { linkRootCauses } from "./root-causes.js";
import type { CheckDefinition, CheckGroup, CheckResult, Exchange, Need, Outcome, ProgressEvent, Variant } from "./types.js";

/**
 * `should`: the platform copes with the problem: the check warns, whatever its level (the level shown stays the check's).
 * `causedBy`: the check whose fault the kit's own earlier calls turned into this one: the result follows from it.
 */
export type Verdict = { ok: true; note?: string } | { ok: false; problem: string; should?: true; causedBy?: string } | { skip: string };

export const ok = (note?: string): Verdict => ({ ok: true, note });
export const problem = (text: string): Verdict => ({ ok: false, problem: text });
export const should = (text: string): Verdict => ({ ok: false, problem: text, should: true });
export const skip = (reason: string): Verdict => ({ skip: reason });

export class Recorder {
  private readonly results = new Map<string, CheckResult>();
  /** Checks to report. */
  private readonly selected: Set<string>;
  /** Checks to judge: the selected ones and everything they depend on (everything, for whole-run checks). */
  private readonly needed: Set<string>;

  constructor(
    private readonly variant: Variant,
    groups: readonly CheckGroup[] | undefined,
    private readonly onProgress?: (event: ProgressEvent) => void,
    /** The checks of the run: the native catalog for the variant, or `check --osb`'s. */
    private readonly applicable: readonly CheckDefinition[] = checksFor(variant),
  ) {
    this.selected = new Set(applicable.filter((check) => !groups || groups.includes(check.group)).map((check) => check.id));
    this.needed = new Set();
    const add = (id: string) => {
      if (this.needed.has(id)) return;
      this.needed.add(id);
      for (const dependency of checkById(id).dependsOn ?? []) add(dependency);
    };
    const wholeRun = applicable.some((check) => this.selected.has(check.id) && WHOLE_RUN_GROUPS.includes(check.group));
    (wholeRun ? applicable.map((check) => check.id) : [...this.selected]).forEach(add);
  }

  /** True when at least one of these checks is to be judged: the step that judges them must run. */
  wants(...ids: string[]): boolean {
    return ids.some((id) => this.needed.has(id));
  }

  /** True when a check that needs `state` is to be judged: the step that reaches it must run. */
  wantsState(state: Need): boolean {
    return this.applicable.some((check) => this.needed.has(check.id) && check.needs?.includes(state));
  }

  /** The run did not reach `state`: every check that needs it, not judged yet, is skipped with `reason`. */
  skipNeeding(state: Need, reason: string): void {
    this.skipAll(this.applicable.filter((check) => check.needs?.includes(state)).map((check) => check.id), reason);
  }

  passed(id: string): boolean {
    return this.results.get(id)?.outcome === "pass";
  }

  /**
   * Record the verdict on one check. `verdict` is a function so it is not evaluated when a
   * dependency already decided to skip the check.
   */
  judge(id: string, verdict: () => Verdict, exchanges: Exchange[] = []): void {
    if (!this.needed.has(id) || this.results.has(id)) return;
    const check = checkById(id);
    const blocker = (check.dependsOn ?? []).find((dependency) => !this.passed(dependency));
    const decided = blocker ? skip(this.dependencyReason(blocker)) : verdict();
    const level = levelIn(check, this.variant);
    let outcome: Outcome;
    let detail: string | undefined;
    if ("skip" in decided) [outcome, detail] = ["skip", decided.skip];
    else if (decided.ok) [outcome, detail] = ["pass", decided.note];
    else [outcome, detail] = [level === "MUST" && !decided.should ? "fail" : "warn", decided.problem];
    const result: CheckResult = {
      id,
      group: check.group,
      level,
      title: check.title,
      cite: check.cite,
      outcome,
      ...(outcome === "fail" || outcome === "warn" ? { advice: adviceLine(check) } : {}),
      ...(detail !== undefined ? { detail } : {}),
      ...("causedBy" in decided && decided.causedBy ? { followsFrom: decided.causedBy } : {}),
      exchanges: outcome === "skip" ? [] : exchanges,
    };
    this.results.set(id, result);
    if (this.selected.has(id)) this.onProgress?.({ type: "check", result });
  }

  /** When a check's dependency did not pass, judge it skipped (with the reason) and return true: its step need not run. */
  skipIfBlocked(id: string): boolean {
    if (!(checkById(id).dependsOn ?? []).some((dependency) => !this.passed(dependency))) return false;
    this.judge(id, () => skip("blocked")); // judge words the skip after the dependency
    return true;
  }

  /** Judge each of `ids` not judged yet as skipped, with `reason`. */
  private skipAll(ids: readonly string[], reason: string): void {
    for (const id of ids) this.judge(id, () => skip(reason));
  }

  /**
   * The selected checks in catalog order, root causes linked, and how many of each outcome; any
   * check the run never reached is skipped with `reason`.
   */
  finish(reason: string): { results: CheckResult[]; counts: Record<Outcome, number> } {
    this.skipAll([...this.selected], reason);
    const results = this.applicable
      .filter((check) => this.selected.has(check.id))
      .map((check) => this.results.get(check.id))
      .filter((result): result is CheckResult => result !== undefined);
    linkRootCauses(results);
    const counts: Record<Outcome, number> = { pass: 0, fail: 0, warn: 0, skip: 0 };
    for (const result of results) counts[result.outcome] += 1;
    return { results, counts };
  }

  private dependencyReason(blocker: string): string {
    const outcome = this.results.get(blocker)?.outcome;
    const what = { fail: "failed", warn: "did not hold", skip: "was skipped", pass: "passed" } as const;
    return outcome ? `needs ${blocker}, which ${what[outcome]}` : `needs ${blocker}, which did not run`;
  }
}
