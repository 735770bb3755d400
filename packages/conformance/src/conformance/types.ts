/**
 * Public types of the conformance kit: what a run is asked to do and what it reports.
 * Nothing here depends on provider-kit's server code: the kit only speaks HTTP.
 */

import type { Encoding, Variant } from "provider-kit/contract";
import type { Exchange } from "provider-kit/contract";
import type { ActionsManifest } from "provider-kit/contract";

export { ENCODINGS, VARIANTS, type Encoding, type Variant } from "provider-kit/contract";
export type { Exchange } from "provider-kit/contract";
export type { ActionsManifest } from "provider-kit/contract";

/** A MUST check that does not hold fails the run; a SHOULD check only warns. */
export type Level = "MUST" | "SHOULD";

export type Outcome = "pass" | "fail" | "warn" | "skip";

export type CheckGroup =
  | "auth"
  | "plans"
  | "pools"
  | "create"
  | "status"
  | "bind-app"
  | "bind-unit"
  | "bind-job"
  | "update"
  | "info"
  | "unbind-app"
  | "destroy"
  | "isolation"
  | "actions"
  | "not-found"
  | "errors"
  | "transport"
  | OsbCheckGroup;

/** The groups of `check --osb`: a broker's side of the Open Service Broker API v2.17. */
export type OsbCheckGroup =
  | "osb-auth"
  | "osb-catalog"
  | "osb-version"
  | "osb-provision"
  | "osb-last-operation"
  | "osb-binding"
  | "osb-update"
  | "osb-deprovision"
  | "osb-errors";

export const OSB_CHECK_GROUPS: readonly OsbCheckGroup[] = [
  "osb-auth",
  "osb-catalog",
  "osb-version",
  "osb-provision",
  "osb-last-operation",
  "osb-binding",
  "osb-update",
  "osb-deprovision",
  "osb-errors",
];

/** The groups of the native check. */
export const CHECK_GROUPS: readonly CheckGroup[] = [
  "auth",
  "plans",
  "pools",
  "create",
  "status",
  "bind-app",
  "bind-unit",
  "bind-job",
  "update",
  "info",
  "unbind-app",
  "destroy",
  "isolation",
  "actions",
  "not-found",
  "errors",
  "transport",
];

/**
 * The line of the rule a check enforces: docs/contract.md ships with the package; the OSB checks
 * cite spec.md of openservicebrokerapi/servicebroker at tag v2.17.
 */
export interface Citation {
  file: "docs/contract.md" | "osb-v2.17/spec.md";
  line: number;
  /** The section of the contract the line is in ("Status", "Bind an app"). */
  section: string;
  /** The words of that line the check relies on. */
  quote: string;
}

/**
 * A state a step of the run must reach before a check can be judged: when the step does not
 * reach it, every check that needs it is skipped, with the step's reason.
 */
export type Need =
  /** Native: the provider's plans need a pool (or the run was asked to treat it so). */
  | "multi-cluster"
  /** Native: the created instance takes binds (a bind does not answer 412, still provisioning). */
  | "bindable-instance"
  /** Native: a service manifest with at least one operation was given. */
  | "manifest"
  /** `--osb`: the catalog's offering is bindable. */
  | "bindable-offering"
  /** `--osb`: the run's instance was provisioned. */
  | "provisioned-instance"
  /** `--osb`: the offering has a second plan to change to. */
  | "two-plans"
  /** `--osb`: a plan the run provisioned is plan_updateable. */
  | "updateable-plan";

export interface CheckDefinition {
  /** Stable id, `<group>.<rule>`: safe to assert on in tests and CI. */
  id: string;
  group: CheckGroup;
  /** One level, or a level per variant where the variants disagree (e.g. unit binds). */
  level: Level | Partial<Record<Variant, Level>>;
  variants: readonly Variant[];
  /** What must hold, in one sentence. */
  title: string;
  cite: Citation;
  /** What to change in the provider when the check does not hold, in one line. */
  advice: string;
  /** States of the run this check is judged in (see `Need`): one not reached skips it. */
  needs?: readonly Need[];
  /** Checks that must pass first; when one did not, this check is skipped with the reason. */
  dependsOn?: readonly string[];
  /**
   * Checks whose failure this one repeats when both fail on the same answers (same method,
   * route and status): it is then reported as following from that root cause. `any`: every check.
   */
  followsFrom?: readonly string[] | "any";
  /**
   * A check over every answer (a crash page explains nothing): its failure follows the earliest
   * failure that lists one of the same answers, whatever that check is, rather than standing as
   * a root cause of its own.
   */
  followsSharedAnswer?: true;
  /**
   * Checks of one family break together when one fault breaks them, whatever they answered
   * (no lookup of the instance fails every unknown-instance probe): the first failure of the
   * family is their root cause.
   */
  family?: string;
}

export interface CheckResult {
  id: string;
  group: CheckGroup;
  level: Level;
  title: string;
  cite: Citation;
  outcome: Outcome;
  /** On a failure or warning: what to change in the provider, and the contract's section that says so. */
  advice?: string;
  /** Why it failed, warned or was skipped; a short note on a pass. */
  detail?: string;
  /** On a failure or warning: the id of the failed check it follows from (its root cause). */
  followsFrom?: string;
  /** The calls the verdict is based on (shown on failures and warnings). */
  exchanges: Exchange[];
}

export interface ConformanceReport {
  url: string;
  /** Set on a `check --osb` run: the broker side of the Open Service Broker API was checked (variant and encoding do not apply). */
  protocol?: "osb";
  variant: Variant;
  encoding: Encoding;
  /** The instance the run created. */
  instance: string;
  /** True when no MUST check failed. */
  passed: boolean;
  counts: Record<Outcome, number>;
  results: CheckResult[];
  /** What the run made (instances, bindings) and could not remove, each with the answer that refused and the call that removes it. */
  leftovers: Leftover[];
  /** What the run did differently from what was asked (e.g. a plan Variant B cannot send). */
  notes: string[];
  /** True when the run was interrupted (its `signal` aborted) before every check ran. */
  interrupted: boolean;
  durationMs: number;
}

/** An instance, or a binding of one, the run made and could not remove. */
export interface Leftover {
  instance: string;
  /** Set when what is left over is this binding of `instance` (`check --osb`: its id; else `app <name>`, `unit <host>` or `job <name>`). */
  binding?: string;
  /** What the last removal got, e.g. `DELETE /resources/x answered 500: its disk is busy`. */
  reason: string;
  /** The call that removes it, to send once the provider can, e.g. `DELETE /resources/x/bind-app (app-name=x-app, app-host=x-app.example.com)`. */
  removeWith: string;
}

/** Reported while the run waits, so a terminal can show progress. */
export type ProgressEvent =
  | { type: "waiting"; instance: string; status: number; elapsedMs: number; timeoutMs: number }
  | { type: "check"; result: CheckResult }
  | { type: "cleanup"; instance: string; removed: boolean; reason?: string }
  /** A destroy is on its way (a provider may take long to answer it); `attempt` at cleanup, which retries. */
  | { type: "destroying"; instance: string; attempt?: { number: number; of: number } }
  /** A destroy at cleanup failed (`reason`, its answer); the next attempt follows in `delayMs`. */
  | { type: "retrying"; instance: string; delayMs: number; reason: string };

export interface ConformanceOptions {
  /** Base URL of the provider, e.g. `http://127.0.0.1:8080` (a path prefix is kept). */
  url: string;
  username: string;
  password: string;
  /** Default `current`. */
  variant?: Variant;
  /** Default `form`. */
  encoding?: Encoding;
  /** Plan to create the instance with. Default: the first plan the provider lists, else none. Variant B sends none (a note says so). */
  plan?: string;
  /** Team sent on create and update. Default `pkc-team`. */
  team?: string;
  /** How long to wait for the instance to become ready. Default 120 000 ms. */
  provisionTimeoutMs?: number;
  /** Delay between status polls. Default 500 ms. */
  pollIntervalMs?: number;
  /** Per-request timeout. Default 30 000 ms. */
  requestTimeoutMs?: number;
  /** Only run (and report) these groups; the steps they need still run. Default: all. */
  groups?: readonly CheckGroup[];
  /** Name of the request-id header the operator configured. Default `X-Request-ID`. */
  requestIdHeader?: string;
  /**
   * Instance name to create. Default `pkc-<random>-conformance`, unique per run. The second instance
   * is this name plus `-2`: a long name tells whether the provider keeps names whole.
   */
  instance?: string;
  /**
   * Delays before each retry of a destroy that failed at cleanup, in ms. Default
   * [500, 1000, 2000, 4000] (five attempts); `[]` tries once.
   */
  cleanupRetryDelaysMs?: readonly number[];
  /**
   * The service's manifest of its custom actions (`provider-kit manifest --actions`, or
   * `actionsManifest(actions)`): each operation is called on the created instance. Without it the
   * actions checks are skipped.
   */
  manifest?: ActionsManifest;
  /**
   * Check the provider as a multi-cluster service even when its plans answer without a pool. Without
   * it, a provider is multi-cluster when plans asked without a pool answer "pool needed" (400,
   * `missing_params: ["cluster"]`). Then its plans are asked for each of `pools`, and every call
   * about the run's instances carries the first pool's headers. Today's platform only (`current`).
   */
  multiCluster?: boolean;
  /** The pools a multi-cluster provider is asked plans for; the run's instances live in the first. Default `pkc-pool-a`, `pkc-pool-b`. */
  pools?: readonly string[];
  /** Abort the run: the instance is still removed before the promise resolves. */
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
}
