/**
 * The run itself: the calls the platform makes over an instance's life, in the platform's
 * order, each answer judged against the checks it bears on. Steps whose checks were not asked
 * for are not run; calls on an instance whose earlier step failed are not sent.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { poolPlacement, type AppNames, type PlatformCalls, type RunNames } from "./calls.js";
import { distinctAnswers, routeOf, statusHint } from "./evidence.js";
import { isolationVerdict, sameCredentials, sharedCredentials, takenIdentity } from "./isolation.js";
import type { Call, CallResult, Method, PlatformClient } from "provider-kit/contract";
import { ok, problem, should, skip, type Recorder, type Verdict } from "./recorder.js";
import { madeBy, type Made, type Removals } from "./removals.js";
import {
  bindResultProblem,
  errorTextProblem,
  explanationProblem,
  planNames,
  infoProblem,
  isJson,
  isJsonContentType,
  plansProblem,
} from "provider-kit/contract";
import type { ActionsManifest, ProgressEvent, Variant } from "./types.js";
import { ConformanceUsageError } from "./usage.js";
import { isPoolRequired, type Placement } from "provider-kit/contract";
import { disclosedSecret } from "provider-kit/contract";

export interface ScenarioContext {
  client: PlatformClient;
  recorder: Recorder;
  variant: Variant;
  names: RunNames;
  /** Built once the plan is known (it comes from the plan list), and the pool of the instances, if any. */
  callsFor: (plan: string | undefined, placement?: Placement) => PlatformCalls;
  plan?: string;
  /** Asked to check the provider as a multi-cluster service, whatever its plans answer without a pool. */
  multiCluster: boolean;
  /** The pools whose plans a multi-cluster provider is asked for; the instances live in the first. */
  pools: readonly string[];
  /** Set once known: the pool the instances live in (a multi-cluster provider), which the cleanup's destroys name too. */
  instancePlacement?: Placement;
  provisionTimeoutMs: number;
  pollIntervalMs: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** What the run made (instances, bindings), removed at the end whatever happened: each call's answer goes to it. */
  removals: Removals;
  /** Answers whose body is JSON data (plans, bind results, info): their Content-Type is judged. */
  jsonAnswers: CallResult[];
  /** The service's manifest of its actions: each operation is called on the instance. */
  manifest?: ActionsManifest;
  /**
   * Set when the kit's own calls may have dropped the first app's binding before its unbind: the
   * check whose fault that would be, and how (the second app unbound while sharing its
   * credentials, or unbound at its address after a swap).
   */
  disturbed?: { check: string; how: string };
}

/** The provider did not answer the first call at all. */
export class ProviderUnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(`Cannot reach the provider at ${url}: ${reason}. Check the URL and that the provider is running.`);
    this.name = "ProviderUnreachableError";
  }
}

/** The provider answered 401 to the run's credentials on its first calls: no check could say more. */
export class CredentialsRefusedError extends Error {
  constructor(url: string) {
    super(
      `The provider at ${url} refused the credentials given (401 to its first two calls): ` +
        "pass the username and password the provider was started with (--username, --password; for a provider-kit provider, its PROVIDER_PASSWORD).",
    );
    this.name = "CredentialsRefusedError";
  }
}

/** Thrown out of a step when the run's signal aborts; the run then cleans up. */
export class Interrupted extends Error {}

const is2xx = (status: number) => status >= 200 && status < 300;
const only = (expected: number) => (status: number) => status === expected;

function expectStatus(result: CallResult, accept: (status: number) => boolean, expected: string): Verdict {
  if (!result.answer) return problem(`${describe(result)} got no answer: ${result.error}`);
  return accept(result.answer.status) ? ok() : problem(unexpected(result, expected));
}

/** "PUT /resources/x answered 405, expected 2xx (405 means the provider does not serve PUT on ...)". */
function unexpected(result: CallResult, expected: string): string {
  const status = statusOf(result) ?? 0;
  const hint = statusHint(result.exchange.method, result.exchange.path, status);
  return `${describe(result)} answered ${status}, expected ${expected}${hint ? ` (${hint})` : ""}`;
}

function describe(result: CallResult): string {
  return `${result.exchange.method} ${result.exchange.path}`;
}

const bodyOf = (result: CallResult) => result.answer?.body ?? "";
const statusOf = (result: CallResult | undefined) => result?.answer?.status;
const succeeded = (result: CallResult | undefined) => is2xx(statusOf(result) ?? 0);

export async function runScenario(context: ScenarioContext): Promise<void> {
  const { recorder: checks, variant, names } = context;
  const send: Send = async (call, made) => {
    const result = await context.client.send(call, context.signal);
    context.removals.sent(call, result, made);
    if (context.signal?.aborted) throw new Interrupted();
    return result;
  };

  const plans = await planStep(context, send);
  context.instancePlacement = plans.placement;
  const calls = context.callsFor(plans.chosen, plans.placement);
  const made = madeBy(calls, names);

  if (variant !== "B") await authStep(context, send, calls);
  await notFoundStep(context, send, calls);

  const instance = names.instance;
  // Every check on the instance needs create.status, so this is "any instance check asked for".
  if (checks.wants("create.status")) {
    const created = await send(calls.create(instance), made.instance(instance));
    checks.judge("create.status", () => expectStatus(created, is2xx, "2xx"), [created.exchange]);
  }
  // Created now, so that it provisions while the first one does.
  if (checks.passed("create.status") && checks.wants("create.fresh-name")) {
    const second = await send(calls.create(names.otherInstance), made.instance(names.otherInstance));
    checks.judge("create.fresh-name", () => freshNameVerdict(second, instance, names.otherInstance), [second.exchange]);
  }
  if (checks.wants("create.unknown-plan")) {
    // A plan list that fails says nothing about plans: the create is sent all the same.
    if (plans.listed?.length === 0) {
      checks.judge("create.unknown-plan", () => skip("the provider lists no plans, so no plan is unknown to it"));
    } else {
      const refused = await send(calls.create(names.unknownPlanInstance, UNKNOWN_PLAN), made.instance(names.unknownPlanInstance));
      checks.judge("create.unknown-plan", () => (plans.listed ? unknownPlanVerdict(refused) : withoutPlanList(unknownPlanVerdict(refused))), [refused.exchange]);
    }
  }
  if (checks.passed("create.status")) {
    const bindEarly = await awaitReady(context, send, calls);
    if (checks.wants("create.duplicate")) {
      const duplicate = await send(calls.create(instance));
      checks.judge("create.duplicate", () => expectStatus(duplicate, only(409), "409 (already exists)"), [duplicate.exchange]);
    }
    await boundSteps(context, send, calls, bindEarly);
    if (checks.wants("destroy.status")) {
      await context.removals.unbindAll(instance);
      context.onProgress?.({ type: "destroying", instance });
      const destroy = await send(calls.destroy(instance));
      checks.judge("destroy.status", () => expectStatus(destroy, is2xx, "2xx"), [destroy.exchange]);
    }
  }

  judgeWholeRun(context);
}

/** The create of a name never used: anything but 2xx fails, and "already exists" points at names cut short. */
function freshNameVerdict(result: CallResult, first: string, name: string): Verdict {
  const status = statusOf(result);
  if (status === undefined) return problem(`${describe(result)} for "${name}" got no answer: ${result.error}`);
  if (is2xx(status)) return ok();
  const shared = commonPrefixLength(first, name);
  const refusedAsTaken = status === 409 || /already exists|exists already|duplicate|taken/i.test(bodyOf(result));
  return problem(
    refusedAsTaken
      ? `${describe(result)} for "${name}", a name never used, answered ${status}, refused as taken: "${name}" and "${first}" share their first ${shared} characters, so the provider cuts names short; keep the whole name (or a hash of it) in what it derives from it`
      : `${describe(result)} for "${name}", a name never used, answered ${status}, expected 2xx`,
  );
}

function commonPrefixLength(a: string, b: string): number {
  let length = 0;
  while (length < a.length && a[length] === b[length]) length++;
  return length;
}

/** No provider lists this plan. */
const UNKNOWN_PLAN = "pkc-no-such-plan";

function unknownPlanVerdict(result: CallResult): Verdict {
  const plan = `with plan "${UNKNOWN_PLAN}"`;
  const status = statusOf(result);
  if (status === undefined) return problem(`${describe(result)} ${plan} got no answer: ${result.error}`);
  if (is2xx(status)) return problem(`${describe(result)} ${plan}, which the provider does not list, answered ${status}: refuse it with 400 and say which plans exist`);
  if (status === 409) return problem(`${describe(result)} ${plan} answered 409 (already exists) for a name never used: refuse an unknown plan with 400 and say which plans exist`);
  if (!((status >= 400 && status < 500) || status === 500)) return problem(unexpected(result, "400 (any 4xx) or 500 with an explanation"));
  const unexplained = explanationProblem(bodyOf(result), result.answer?.contentType ?? "");
  return unexplained ? problem(`${describe(result)} ${plan} answered ${status} with ${unexplained}: say that the plan does not exist, and which do`) : ok();
}

/**
 * The plans could not be read (405, an error, not a JSON list): the platform reads that as "no
 * plans" and offers none, so a plan it does not know is no fault the platform sees: a warning.
 */
function withoutPlanList(verdict: Verdict): Verdict {
  if (!("ok" in verdict) || verdict.ok) return verdict;
  return should(`${verdict.problem} (a warning only: the plans could not be read, which the platform takes as "no plans")`);
}

/** Sends one call; `made`: what the call makes (a create, a bind), to remove at the end unless the run does. */
type Send = (call: Call, made?: Made) => Promise<CallResult>;

/** The plans the run saw, and where its instances live. */
interface PlanChoice {
  /** The plan to create instances with. */
  chosen?: string;
  /** The plans of the instances' pool (the only plans, without pools), when the provider listed them well. */
  listed?: string[];
  /** The instances' pool, when the provider is multi-cluster. */
  placement?: Placement;
}

/** Lists the plans (first call of the run: it also tells whether the provider is there at all), and per pool when multi-cluster. */
async function planStep(context: ScenarioContext, send: Send): Promise<PlanChoice> {
  const { recorder: checks, variant } = context;
  const withoutPlan = context.callsFor(undefined);
  // Variant B lists no plans: its first call is the status of the unknown instance.
  const first = variant === "B" ? withoutPlan.status(context.names.missing) : withoutPlan.plans();
  const result = await send(first);
  if (!result.answer) throw new ProviderUnreachableError(context.client.url, result.error ?? "no answer");
  // One 401 may be a route's own rule; two different calls refused mean the credentials are wrong.
  if (result.answer.status === 401 && (await send(withoutPlan.status(context.names.missing))).answer?.status === 401) {
    throw new CredentialsRefusedError(context.client.url);
  }
  if (variant === "B") return { chosen: context.plan };
  // Today's platform reads this answer as "ask the user for a pool": a multi-cluster service.
  const poolNeeded = variant === "current" && isPoolRequired(result.answer.status, bodyOf(result));
  checks.judge(
    "plans.status",
    () => (poolNeeded ? ok('400 "pool needed": a multi-cluster service, whose plans are asked per pool (the pools checks)') : expectStatus(result, only(200), "200")),
    [result.exchange],
  );
  checks.judge("plans.shape", () => {
    if (poolNeeded) return skip("the plans need a pool: pools.plans judges each pool's");
    const wrong = plansProblem(bodyOf(result));
    return wrong ? problem(wrong) : ok();
  }, [result.exchange]);
  if (!poolNeeded) context.jsonAnswers.push(result);
  const choice = (body: string, listedWell: boolean): PlanChoice => {
    const listed = listedWell ? planNames(body) : undefined;
    if (context.plan !== undefined && listed !== undefined && listed.length > 0 && !listed.includes(context.plan)) {
      throw new ConformanceUsageError(unknownPlanGiven(context.plan, listed));
    }
    return { chosen: context.plan ?? planNames(body)[0], listed };
  };
  if (variant !== "current" || !(context.multiCluster || poolNeeded)) {
    checks.skipNeeding("multi-cluster", notMultiCluster(result));
    return choice(bodyOf(result), checks.passed("plans.shape"));
  }
  const instancePool = await poolPlansStep(context, send, withoutPlan);
  const placement = poolPlacement(context.pools[0]!);
  // The instances' plan comes from their pool's list; failing that, from the list without a pool.
  const poolListed = statusOf(instancePool) === 200 && plansProblem(bodyOf(instancePool)) === undefined;
  return { ...(poolListed ? choice(bodyOf(instancePool), true) : choice(bodyOf(result), checks.passed("plans.shape"))), placement };
}

/**
 * The plan asked for is not among those the provider just listed: a create with it could only
 * fail (create.status), blaming the provider for the caller's typo or a renamed plan.
 */
function unknownPlanGiven(plan: string, listed: string[]): string {
  return `The plan "${plan}" is not one the provider lists (${listed.join(", ")}): pass one of those as --plan (the plan option), or leave it out for the first`;
}

function notMultiCluster(result: CallResult): string {
  const answered = `GET /resources/plans without a pool answered ${statusOf(result)}, not 400 with missing_params ["cluster"]`;
  return `the provider is not multi-cluster (${answered}); pass --multi-cluster (multiCluster: true) to ask its plans per pool all the same`;
}

/** The plans of each pool, asked with the pool's headers as the platform sends them; returns the first pool's answer (the instances'). */
async function poolPlansStep(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<CallResult> {
  const { recorder: checks, pools } = context;
  const answers: Array<{ pool: string; result: CallResult }> = [];
  for (const pool of pools) answers.push({ pool, result: await send(calls.plansFor(poolPlacement(pool))) });
  const forPool = ({ pool }: { pool: string }) => `pool "${pool}": `;

  const askingAgain = answers.filter(({ result }) => isPoolRequired(statusOf(result) ?? 0, bodyOf(result)));
  checks.judge("pools.pool-read", () =>
    askingAgain.length === 0
      ? ok()
      : problem(
          `${askingAgain.map((answer) => `${forPool(answer)}${describe(answer.result)} answered 400 "pool needed" (missing_params ["cluster"])`).join("; ")}: ` +
            "the call names the pool in X-Tsuru-Pool-Name (its cluster in X-Tsuru-Cluster-Name); read it (ctx.placement.poolName in provider-kit) " +
            "and answer that pool's plans, or the platform asks its user again for the pool they gave",
        ),
    (askingAgain.length > 0 ? askingAgain : answers).map(({ result }) => result.exchange),
  );

  const wrong = answers.flatMap((answer) => {
    const { result } = answer;
    if (!result.answer) return [{ ...answer, why: `${forPool(answer)}${describe(result)} got no answer: ${result.error}` }];
    if (result.answer.status !== 200) return [{ ...answer, why: `${forPool(answer)}${unexpected(result, "200")}` }];
    const shape = plansProblem(bodyOf(result));
    return shape ? [{ ...answer, why: `${forPool(answer)}${shape}` }] : [];
  });
  for (const { result } of answers) if (!wrong.some((answer) => answer.result === result)) context.jsonAnswers.push(result);
  checks.judge("pools.plans", () =>
    wrong.length === 0
      ? ok(answers.map(({ pool, result }) => `${pool}: ${planNames(bodyOf(result)).join(", ") || "no plans"}`).join("; "))
      : problem(
          `${wrong.map(({ why }) => why).join("; ")}: answer the plans of each pool the platform names with 200 and a JSON array of {name, description}; ` +
            "the platform reads anything else as \"no plans\" for that pool",
        ),
    (wrong.length > 0 ? wrong : answers).map(({ result }) => result.exchange),
  );
  return answers[0]!.result;
}

/** Calls without credentials, with a wrong password, and with the password plus a colon suffix. */
async function authStep(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, client, names } = context;
  const probes = (): Call[] => [calls.plans(), calls.bindApp(names.missing), calls.destroy(names.missing)];
  const cases = [
    { id: "auth.no-credentials", credentials: "none" as const, what: "without credentials" },
    { id: "auth.wrong-password", credentials: { password: `${client.password}-wrong` }, what: "with a wrong password" },
    { id: "auth.password-colon", credentials: { password: `${client.password}:x` }, what: "with the password followed by ':x'" },
  ];
  for (const { id, credentials, what } of cases) {
    if (!checks.wants(id) || checks.skipIfBlocked(id)) continue;
    const results: CallResult[] = [];
    for (const call of probes()) results.push(await send({ ...call, credentials }));
    const accepted = results.filter((result) => statusOf(result) !== 401);
    checks.judge(id, () =>
      accepted.length === 0
        ? ok()
        : problem(accepted.map((result) => `${describe(result)} ${what} answered ${statusOf(result) ?? result.error}`).join("; ") + ", expected 401"),
      accepted.map((result) => result.exchange),
    );
  }
}

/** Every instance route of the variant, for an instance that does not exist. */
async function notFoundStep(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names } = context;
  const routes: Array<[string, (instance: string) => Call]> = [
    ["not-found.bind-app", calls.bindApp],
    ["not-found.unbind-app", calls.unbindApp],
    ["not-found.bind-unit", calls.bindUnit],
    ["not-found.unbind-unit", calls.unbindUnit],
    ["not-found.bind-hostname", calls.bindApp],
    ["not-found.unbind-hostname", calls.unbindApp],
    ["not-found.bind-job", calls.bindJob],
    ["not-found.unbind-job", calls.unbindJob],
    ["not-found.update", calls.update],
    ["not-found.destroy", calls.destroy],
    ["not-found.info", calls.info],
    ["not-found.status", calls.status],
  ];
  for (const [id, call] of routes) {
    if (!checks.wants(id)) continue;
    const result = await send(call(names.missing));
    const judge = LENIENT_NOT_FOUND[id] ?? ((answer: CallResult) => expectStatus(answer, only(404), "404"));
    checks.judge(id, () => judge(result), [result.exchange]);
  }
}

/** Unknown-instance probes where the platform copes with more than the 404 the contract asks for. */
const LENIENT_NOT_FOUND: Record<string, (result: CallResult) => Verdict> = {
  // The platform ignores a 404 on unbind: a 2xx has the same effect.
  "not-found.unbind-app": (result) =>
    succeeded(result)
      ? should(`${describe(result)} answered ${statusOf(result)} for an instance that does not exist; the platform ignores 404 on unbind, so this works, but 404 says the truth`)
      : expectStatus(result, only(404), "404"),
  // The platform reads any non-200 on info as "no extra info".
  "not-found.info": (result) => infoStatusVerdict(result, false),
};

/**
 * 404, and 200 for an instance that exists, pass; a redirect or no answer fails; any other
 * status only loses the info (the platform reads it as "no extra info"): a warning.
 */
function infoStatusVerdict(result: CallResult, exists: boolean): Verdict {
  const status = statusOf(result);
  const expected = exists ? "200, or 404 when there is no extra info" : "404";
  if (status === 404 || (exists && status === 200)) return ok();
  if (status === undefined || is2xx(status) || (status >= 300 && status < 400)) return expectStatus(result, () => false, expected);
  return should(`${unexpected(result, expected)}; the platform reads it as "no extra info"`);
}

/**
 * Polls the status until the instance is ready. At the first 202 it sends a bind: the next
 * status answer tells whether the instance was still provisioning when the bind arrived.
 * Returns that early bind's result (a sync provider, or a lost race, may have bound the app).
 */
async function awaitReady(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<CallResult | undefined> {
  const { recorder: checks, names, variant } = context;
  const started = Date.now();
  const answers: CallResult[] = [];
  let early: CallResult | undefined;
  let earlyWhilePending: boolean | undefined;
  let verdict: Verdict | undefined;
  while (!verdict) {
    const result = await send(calls.status(names.instance));
    answers.push(result);
    const status = statusOf(result);
    if (early && earlyWhilePending === undefined) earlyWhilePending = status === 202;
    if (status === 202) {
      if (!early && checks.wants("bind-app.provisioning")) {
        early = await send(calls.bindApp(names.instance), madeBy(calls, names).app(names.instance));
        continue;
      }
      const elapsedMs = Date.now() - started;
      context.onProgress?.({ type: "waiting", instance: names.instance, status, elapsedMs, timeoutMs: context.provisionTimeoutMs });
      if (elapsedMs >= context.provisionTimeoutMs) {
        verdict = problem(`still 202 (pending) after ${Math.round(elapsedMs / 1000)} s; raise the provisioning timeout if the provider is just slow`);
      } else {
        await sleep(context.pollIntervalMs, undefined, { signal: context.signal }).catch(() => {
          throw new Interrupted();
        });
      }
    } else if (status === 204 || status === 200) {
      verdict = ok(answers.length > 1 ? `ready after ${answers.length - 1} pending answer(s)` : undefined);
    } else if (status === 404 && variant === "current" && bodyOf(result).includes(names.instance)) {
      // A route the provider does not have never names the instance: this one looked it up and missed.
      verdict = problem(
        `${describe(result)} answered 404 naming the instance this run created: the status route cannot find it, and the platform reads that 404 as "status not implemented"; look the instance up where the create put it`,
      );
    } else if (status === 404 && variant === "current") {
      verdict = ok("the status call answers 404 (not implemented); the instance is taken as ready");
    } else if (status === undefined) {
      verdict = problem(`${describe(result)} got no answer: ${result.error}`);
    } else {
      verdict = problem(unexpected(result, "202 while pending then 204 (or 200 with the status text)"));
    }
  }
  const ready = verdict;
  const last = answers[answers.length - 1];
  checks.judge("status.ready", () => ready, last ? [last.exchange] : []);

  checks.judge("bind-app.provisioning", () => {
    if (!early) return skip("the first status answer was not 202: the provider provisions synchronously");
    if (statusOf(early) === 412) return ok();
    if (earlyWhilePending) return problem(`${describe(early)} answered ${statusOf(early) ?? early.error} while the status still answered 202, expected 412`);
    return skip("the instance became ready while the bind was on its way: run again to tell");
  }, early ? [early.exchange] : []);

  const pendingBodies = answers.filter((result) => statusOf(result) === 202 && bodyOf(result).trim() !== "");
  const pendingNotText = pendingBodies.filter((result) => errorTextProblem(bodyOf(result), result.answer?.contentType ?? ""));
  checks.judge("status.pending-text", () => {
    if (pendingBodies.length === 0) return skip("no 202 status answer carried a body");
    const first = pendingNotText[0];
    if (!first) return ok(`${pendingBodies.length} pending answer(s) with a progress text`);
    return problem(`${describe(first)} answered 202 with ${errorTextProblem(bodyOf(first), first.answer?.contentType ?? "")}: send the progress as one short line of plain text`);
  }, pendingNotText.slice(0, 1).map((result) => result.exchange));

  const emptyTexts = answers.filter((result) => statusOf(result) === 200 && bodyOf(result).trim() === "");
  checks.judge("status.text-body", () => {
    if (!answers.some((result) => statusOf(result) === 200)) return skip("the status call never answered 200");
    return emptyTexts.length === 0 ? ok() : problem(`${describe(emptyTexts[0]!)} answered 200 with an empty body: answer 204 when ready, or 200 with the status text`);
  }, emptyTexts.slice(0, 1).map((result) => result.exchange));
  return early;
}

/**
 * Everything done to the created instance: binds, update, info, unbinds. The platform binds
 * without asking the status first, so a failed status.ready stops these only when a bind
 * answers 412 (still provisioning).
 */
async function boundSteps(context: ScenarioContext, send: Send, calls: PlatformCalls, early: CallResult | undefined): Promise<void> {
  const { recorder: checks, names } = context;
  const made = madeBy(calls, names);
  let bind: CallResult | undefined;
  if (!checks.passed("status.ready") && checks.wantsState("bindable-instance")) {
    bind = bindJsonAnswer(context, await send(calls.bindApp(names.instance), made.app(names.instance)));
    if (statusOf(bind) === 412) {
      checks.skipNeeding("bindable-instance", `needs status.ready, which did not pass, and ${describe(bind)} answered 412 (still provisioning)`);
      return;
    }
  }
  let bound = succeeded(early);
  if (checks.wants("bind-app.status")) {
    const first = bind ?? bindJsonAnswer(context, await send(calls.bindApp(names.instance), made.app(names.instance)));
    bound ||= succeeded(first);
    await bindAppSteps(context, send, calls, first);
  }
  await unitSteps(context, send, calls);
  await jobSteps(context, send, calls);
  await updateAndInfoSteps(context, send, calls);
  // While the app is bound: an action about an app finds the one the kit names.
  await actionSteps(context, send, calls);
  if (bound) await unbindSteps(context, send, calls);
}

/** The bind result's shape: a JSON object or null (`stringsOnly`: of strings). */
function bindResultVerdict(result: CallResult, stringsOnly: boolean): Verdict {
  const wrong = bindResultProblem(bodyOf(result), stringsOnly);
  return wrong ? problem(`${describe(result)}: ${wrong}`) : ok();
}

/** The first app's bind judged, bound again, then the isolation steps. */
async function bindAppSteps(context: ScenarioContext, send: Send, calls: PlatformCalls, first: CallResult): Promise<void> {
  const { recorder: checks, names } = context;
  checks.judge("bind-app.status", () => expectStatus(first, is2xx, "2xx"), [first.exchange]);
  checks.judge("bind-app.json", () => bindResultVerdict(first, false), [first.exchange]);
  checks.judge("bind-app.env-strings", () => bindResultVerdict(first, true), [first.exchange]);
  let again: CallResult | undefined;
  if (checks.wants("bind-app.rebind") && !checks.skipIfBlocked("bind-app.rebind")) {
    const rebind = bindJsonAnswer(context, await send(calls.bindApp(names.instance), madeBy(calls, names).app(names.instance)));
    again = rebind;
    checks.judge("bind-app.rebind", () => (succeeded(rebind) ? bindResultVerdict(rebind, false) : expectStatus(rebind, is2xx, "2xx")), [rebind.exchange]);
  }
  await isolationSteps(context, send, calls, first, again);
}

/** A unit bound and unbound (older platforms; 404: not supported). */
async function unitSteps(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names } = context;
  if (!checks.wants("bind-unit.status")) return;
  const bindUnit = bindJsonAnswer(context, await send(calls.bindUnit(names.instance), madeBy(calls, names).unit(names.instance)));
  checks.judge("bind-unit.status", () => expectStatus(bindUnit, (status) => is2xx(status) || status === 404, "2xx, or 404 when not supported"), [bindUnit.exchange]);
  checks.judge("bind-unit.supported", () => (statusOf(bindUnit) === 404 ? problem("unit binds answer 404 (not supported)") : ok()), [bindUnit.exchange]);
  if (succeeded(bindUnit)) {
    const unbindUnit = await send(calls.unbindUnit(names.instance));
    checks.judge("bind-unit.unbind", () => expectStatus(unbindUnit, is2xx, "2xx"), [unbindUnit.exchange]);
  }
}

/** A job bound and unbound (404: not supported). */
async function jobSteps(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names } = context;
  if (!checks.wants("bind-job.status")) return;
  const bindJob = bindJsonAnswer(context, await send(calls.bindJob(names.instance), madeBy(calls, names).job(names.instance)));
  checks.judge("bind-job.status", () => expectStatus(bindJob, (status) => is2xx(status) || status === 404, "2xx, or 404 when not supported"), [bindJob.exchange]);
  checks.judge("bind-job.supported", () => (statusOf(bindJob) === 404 ? problem("job binds answer 404 (not supported)") : ok()), [bindJob.exchange]);
  checks.judge("bind-job.result", () => bindResultVerdict(bindJob, true), [bindJob.exchange]);
  if (succeeded(bindJob)) {
    const unbindJob = await send(calls.unbindJob(names.instance));
    checks.judge("bind-job.unbind", () => expectStatus(unbindJob, is2xx, "2xx"), [unbindJob.exchange]);
  }
}

/** The instance updated, and its extra info read. */
async function updateAndInfoSteps(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names } = context;
  if (checks.wants("update.status")) {
    const update = await send(calls.update(names.instance));
    checks.judge("update.status", () => expectStatus(update, (status) => is2xx(status) || status === 404, "2xx, or 404 when not supported"), [update.exchange]);
    checks.judge("update.supported", () => (statusOf(update) === 404 ? problem("updates answer 404 (not supported)") : ok()), [update.exchange]);
  }
  if (checks.wants("info.status")) {
    const info = bindJsonAnswer(context, await send(calls.info(names.instance)));
    checks.judge("info.status", () => infoStatusVerdict(info, true), [info.exchange]);
    checks.judge("info.supported", () => (statusOf(info) === 404 ? problem("the info call answers 404 (no extra info)") : ok()), [info.exchange]);
    checks.judge("info.shape", () => {
      const wrong = infoProblem(bodyOf(info));
      return wrong ? problem(wrong) : ok();
    }, [info.exchange]);
  }
}

/** The first app unbound, then unbound again: judged whatever the first unbind got (a binding the kit's own calls dropped is gone all the same). */
async function unbindSteps(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names } = context;
  if (!checks.wants("unbind-app.status", "unbind-app.repeat")) return;
  const unbind = await send(calls.unbindApp(names.instance));
  checks.judge("unbind-app.status", () => afterDisturbance(context, expectStatus(unbind, is2xx, "2xx")), [unbind.exchange]);
  const again = await send(calls.unbindApp(names.instance));
  checks.judge("unbind-app.repeat", () => expectStatus(again, is2xx, "2xx (an unbind of a binding already gone succeeds)"), [again.exchange]);
}

/**
 * A failed unbind of the first app after the kit's own calls may have dropped its binding
 * (`context.disturbed`): that is the disturbing check's fault, shown as such.
 */
function afterDisturbance(context: ScenarioContext, verdict: Verdict): Verdict {
  const disturbed = context.disturbed;
  if (!disturbed || !("ok" in verdict) || verdict.ok) return verdict;
  return { ...verdict, problem: `${verdict.problem}; ${disturbed.how}`, causedBy: disturbed.check };
}

/** Tried, in this order, as the method an action's path does not declare. */
const OTHER_METHODS: readonly Method[] = ["PATCH", "PUT", "DELETE", "POST", "GET"];
/** A body no parser accepts. */
const MALFORMED_BODY = { contentType: "application/json", body: '{"' };

/** What one operation of the manifest answered. */
interface ActionProbe {
  action: string;
  /** Sent as the platform's proxy does, without a body. */
  declared: CallResult;
  anonymous: CallResult;
  /** Writes only: the same call with a malformed body. */
  malformed?: CallResult;
  /** The path with a method no operation declares for it. */
  other?: CallResult;
}

/**
 * Calls each operation of the manifest on the instance: as declared, without credentials, with a
 * malformed body (writes), and with a method it does not declare. Path parameters get the name
 * of the run's app, bound at that point.
 */
async function actionSteps(context: ScenarioContext, send: Send, calls: PlatformCalls): Promise<void> {
  const { recorder: checks, names, manifest } = context;
  if (!checks.wantsState("manifest")) return;
  if (!manifest) {
    checks.skipNeeding("manifest", "no service manifest given: pass it (--manifest <file>, or manifest in the options) to check the provider's actions");
    return;
  }
  if (manifest.operations.length === 0) {
    checks.skipNeeding("manifest", "the service manifest declares no operation");
    return;
  }
  const pathOf = (path: string) => `/resources/${names.instance}${path.replace(/\{[^/}]+\}/g, encodeURIComponent(names.app.name))}`;
  const declared = new Set(manifest.operations.map(({ method, path }) => `${method} ${pathOf(path)}`));
  const probes: ActionProbe[] = [];
  for (const { method, path: pattern, action } of manifest.operations) {
    const path = pathOf(pattern);
    const otherMethod = OTHER_METHODS.find((candidate) => !declared.has(`${candidate} ${path}`));
    probes.push({
      action,
      declared: await send(calls.action(method, path)),
      anonymous: await send(calls.action(method, path, { credentials: "none" })),
      malformed: method === "GET" ? undefined : await send(calls.action(method, path, { raw: MALFORMED_BODY })),
      other: otherMethod && (await send(calls.action(otherMethod, path))),
    });
  }

  const missing = probes.filter(({ declared }) => [undefined, 404, 405].includes(statusOf(declared)));
  const failing = probes.filter(({ declared }) => (statusOf(declared) ?? 0) >= 500);
  const list = (offending: CallResult[], what: (result: CallResult) => string, fix: string) => `${offending.map(what).join("; ")}: ${fix}`;
  checks.judge("actions.exists", () => existsVerdict(probes, missing, failing), (missing.length + failing.length > 0 ? [...missing, ...failing] : probes).map(({ declared }) => declared.exchange));

  const open = probes.map(({ anonymous }) => anonymous).filter((result) => statusOf(result) !== 401);
  checks.judge("actions.auth", () =>
    open.length === 0
      ? ok()
      : problem(list(open, (result) => `${describe(result)} without credentials answered ${statusOf(result) ?? result.error}`, "refuse it with 401, as every call")),
    open.map((result) => result.exchange),
  );

  const answered405 = probes
    .flatMap(({ declared, malformed, other }) => [declared, malformed, other])
    .filter((result): result is CallResult => statusOf(result) === 405);
  checks.judge("actions.no-405", () =>
    answered405.length === 0 ? ok() : problem(list(answered405, (result) => `${describe(result)} answered 405`, "answer 404 for a method the path does not serve")),
    answered405.map((result) => result.exchange),
  );

  const writes = probes.filter((probe) => probe.malformed && !missing.includes(probe)).map((probe) => probe.malformed!);
  const refusedBadly = writes.filter((result) => badInputProblem(result) !== undefined);
  checks.judge("actions.bad-input", () => {
    if (writes.length === 0) return skip("no write operation the provider serves");
    return refusedBadly.length === 0
      ? ok()
      : problem(list(refusedBadly, (result) => `${describe(result)} with a malformed JSON body ${badInputProblem(result)}`, "refuse input the action cannot read with 400 and a sentence saying what to send"));
  }, (refusedBadly.length > 0 ? refusedBadly : writes).map((result) => result.exchange));
}

/** Operations the provider does not serve (missing), or that fail on the call the platform's proxy sends (failing). */
function existsVerdict(probes: ActionProbe[], missing: ActionProbe[], failing: ActionProbe[]): Verdict {
  const which = ({ declared, action }: ActionProbe) => `${describe(declared)} (action "${action}")`;
  const parts = [];
  if (missing.length > 0) {
    const answers = missing.map((probe) => (statusOf(probe.declared) === undefined ? `${which(probe)} got no answer: ${probe.declared.error}` : `${which(probe)} answered ${statusOf(probe.declared)}`));
    parts.push(`${answers.join("; ")}: the platform forwards what the manifest declares; serve it, or remove it from the manifest`);
  }
  if (failing.length > 0) {
    const answers = failing.map((probe) => {
      const unexplained = explanationProblem(bodyOf(probe.declared), probe.declared.answer?.contentType ?? "");
      return `${which(probe)} answered ${statusOf(probe.declared)}${unexplained ? ` with ${unexplained}` : ""}`;
    });
    parts.push(`${answers.join("; ")} to the call the platform's proxy sends (no body): the action fails; find why in the provider's log, and refuse a call it cannot serve with a 4xx saying what to send`);
  }
  return parts.length === 0 ? ok(`${probes.length} operation(s) served`) : problem(parts.join("; "));
}

/** Why an action's answer to a malformed body is not a clear refusal (2xx: it reads no body); undefined when it is fine. */
function badInputProblem(result: CallResult): string | undefined {
  const status = statusOf(result);
  if (status === undefined) return `got no answer: ${result.error}`;
  if (is2xx(status)) return undefined;
  const contentType = result.answer?.contentType ?? "";
  const unclear = explanationProblem(bodyOf(result), contentType) ?? errorTextProblem(bodyOf(result), contentType);
  if (status >= 400 && status < 500) return unclear && `answered ${status} with ${unclear}`;
  return `answered ${status}${unclear ? ` with ${unclear}` : ""}`;
}

/**
 * Binds a second app to the instance and the first app to a second instance, and compares
 * what each binding got with the first bind (`again`: the first app's rebind, when it was sent).
 * Every extra binding is undone.
 */
async function isolationSteps(context: ScenarioContext, send: Send, calls: PlatformCalls, first: CallResult, again: CallResult | undefined): Promise<void> {
  const { recorder: checks, names } = context;
  const made = madeBy(calls, names);
  if (checks.wants("isolation.apps") && !checks.skipIfBlocked("isolation.apps")) {
    const other = await bindWhenReady(context, send, calls.bindApp(names.instance, names.otherApp), made.app(names.instance, names.otherApp));
    checks.judge(
      "isolation.apps",
      () => (succeeded(other) ? isolationVerdict(bodyOf(first), bodyOf(other), "two apps on one instance") : problem(unexpected(other, "2xx"))),
      [first.exchange, other.exchange],
    );
    const swap = checks.wants("isolation.swap") && !checks.skipIfBlocked("isolation.swap");
    if (swap) await swapSteps(context, send, calls, { first, again, other });
    else if (succeeded(other)) {
      const unbound = await send(calls.unbindApp(names.instance, names.otherApp));
      const shared = sharedCredentials(bodyOf(first), bodyOf(other));
      if (succeeded(unbound) && shared.length > 0) {
        const how = `the kit had unbound ${names.otherApp.name}, which shared ${shared.join(", ")} with this app (isolation.apps): one binding's unbind dropped what every binding uses`;
        context.disturbed = { check: "isolation.apps", how };
      }
    }
  }
  if (checks.wants("isolation.instances") && !checks.skipIfBlocked("isolation.instances")) {
    const other = await bindWhenReady(context, send, calls.bindApp(names.otherInstance, names.app), made.app(names.otherInstance));
    checks.judge(
      "isolation.instances",
      () => (succeeded(other) ? isolationVerdict(bodyOf(first), bodyOf(other), "one app on two instances") : problem(unexpected(other, "2xx"))),
      [first.exchange, other.exchange],
    );
    if (succeeded(other)) await send(calls.unbindApp(names.otherInstance, names.app));
  }
  if (context.removals.pending(made.instance(names.otherInstance))) {
    await context.removals.unbindAll(names.otherInstance);
    context.onProgress?.({ type: "destroying", instance: names.otherInstance });
    await send(calls.destroy(names.otherInstance));
  }
}

/**
 * The platform's swap calls no provider: the two apps keep their names and take each other's
 * addresses, which later calls carry as `app-host`/`app-hosts`. Then the second app is unbound
 * (twice: a repeat must do no harm), the first bound again (it must keep its own credentials,
 * never get the second's), and the second bound again (it must get new credentials, never the
 * first's). A provider that keys bindings by address drops the wrong one. Values are compared,
 * never shown. The second app is unbound at the end.
 */
async function swapSteps(
  context: ScenarioContext,
  send: Send,
  calls: PlatformCalls,
  before: { first: CallResult; again: CallResult | undefined; other: CallResult },
): Promise<void> {
  const { recorder: checks, names } = context;
  const [app, otherApp] = [names.app, names.otherApp];
  const moved = (to: AppNames, from: AppNames): AppNames => ({ ...to, hosts: from.hosts, internalHosts: from.internalHosts });
  const [swappedApp, swappedOther] = [moved(app, otherApp), moved(otherApp, app)];

  const unbind = await send(calls.unbindApp(names.instance, swappedOther));
  const repeat = await send(calls.unbindApp(names.instance, swappedOther));
  const made = madeBy(calls, names);
  const kept = bindJsonAnswer(context, await send(calls.bindApp(names.instance, swappedApp), made.app(names.instance, swappedApp)));
  const rebound = bindJsonAnswer(context, await send(calls.bindApp(names.instance, swappedOther), made.app(names.instance, swappedOther)));
  await send(calls.unbindApp(names.instance, swappedOther));

  const [verdict, resting] = swapVerdict(app.name, otherApp.name, before, { unbind, kept, rebound });
  const evidence = [resting, ...[unbind, repeat, kept, rebound].filter((result) => result !== resting)];
  checks.judge("isolation.swap", () => verdict, evidence.map((result) => result.exchange));
  if (checks.wants("isolation.swap") && !checks.passed("isolation.swap")) {
    const how = `the kit's swap steps had unbound ${otherApp.name} at ${app.name}'s address (isolation.swap): a provider that keys bindings by address dropped this app's binding then`;
    context.disturbed = { check: "isolation.swap", how };
  }
}

interface SwapAnswers {
  /** The second app's unbind, at the first app's old address. */
  unbind: CallResult;
  /** The first app bound again, at the second's old address. */
  kept: CallResult;
  /** The second app bound again. */
  rebound: CallResult;
}

/** The verdict of isolation.swap, and the call it rests on (shown first). */
function swapVerdict(
  app: string,
  otherApp: string,
  before: { first: CallResult; again: CallResult | undefined; other: CallResult },
  { unbind, kept, rebound }: SwapAnswers,
): [Verdict, CallResult] {
  const keyedByAddress = "the provider keys bindings by the app's address (app-host), which a swap changes: key them by app-name";
  const swapped = "after the apps swapped addresses";
  const unbound = `${swapped} and ${otherApp} was unbound (twice)`;
  if (!succeeded(unbind)) return [problem(`${swapped}, ${unexpected(unbind, "2xx")}`), unbind];
  // A provider whose rebind fails (bind-app.rebind) refuses the first app's bind again whoever
  // holds the binding: that answer tells nothing, the second app's bind still does.
  const rebindFails = before.again !== undefined && !succeeded(before.again);
  if (!succeeded(kept) && !rebindFails) return [problem(`${unbound}, binding ${app} again: ${unexpected(kept, "2xx")}`), kept];
  const taken = succeeded(kept) ? sharedCredentials(bodyOf(kept), bodyOf(before.other)) : [];
  if (taken.length > 0) {
    return [problem(`${unbound}, binding ${app} again gave it the ${taken.join(", ")} ${otherApp} had (values not shown): ${keyedByAddress}`), kept];
  }
  const rebindKeeps = before.again !== undefined && sameCredentials(bodyOf(before.first), bodyOf(before.again));
  if (rebindKeeps && !sameCredentials(bodyOf(kept), bodyOf(before.first))) {
    const touched = `unbinding ${otherApp} touched ${app}'s binding; ${keyedByAddress}`;
    return [problem(`${unbound}, binding ${app} again gave it other credentials than its own, which a rebind keeps otherwise: ${touched}`), kept];
  }
  if (!succeeded(rebound)) return [problem(`${unbound}, binding ${otherApp} again: ${unexpected(rebound, "2xx")}`), rebound];
  const stolen = sharedCredentials(bodyOf(rebound), bodyOf(before.first));
  if (stolen.length > 0) {
    return [problem(`${unbound}, binding ${otherApp} again gave it the ${stolen.join(", ")} ${app} has (values not shown): ${keyedByAddress}`), rebound];
  }
  const identity = takenIdentity(bodyOf(before.first), bodyOf(before.other), bodyOf(rebound));
  if (identity.length > 0) {
    const revoked = `so unbinding ${otherApp} dropped ${app}'s binding: unbinding one app revokes another's access; ${keyedByAddress}`;
    return [problem(`${unbound}, binding ${otherApp} again gave it the ${identity.join(", ")} ${app} had (values not shown), ${revoked}`), rebound];
  }
  if (sameCredentials(bodyOf(rebound), bodyOf(before.other))) {
    const unknown = "the kit cannot tell that the unbind revoked them; give a new binding new credentials";
    return [should(`${unbound}, binding ${otherApp} again gave it the same credentials as before (values not shown): ${unknown}`), rebound];
  }
  return [ok(`${app} kept its credentials; ${otherApp} got new ones`), unbind];
}

/** A bind answer whose Content-Type transport.json-content-type judges. */
function bindJsonAnswer(context: ScenarioContext, result: CallResult): CallResult {
  context.jsonAnswers.push(result);
  return result;
}

/** A bind retried while it answers 412 (the second instance may still be provisioning), up to the provisioning timeout. */
async function bindWhenReady(context: ScenarioContext, send: Send, call: Call, made: Made): Promise<CallResult> {
  const started = Date.now();
  for (;;) {
    const result = await send(call, made);
    if (statusOf(result) !== 412 || Date.now() - started >= context.provisionTimeoutMs) return result;
    await sleep(context.pollIntervalMs, undefined, { signal: context.signal }).catch(() => {
      throw new Interrupted();
    });
  }
}

/** Checks over every answer of the run: error bodies, 405s, redirects, JSON content types. */
function judgeWholeRun(context: ScenarioContext): void {
  const { recorder: checks, client } = context;
  const answered = client.log.filter((result) => result.answer !== undefined);
  /** Judged on the offending answers, each distinct (method, route, status) shown once. */
  const over = (id: string, offending: CallResult[], what: (result: CallResult) => string, fix: string, level = problem) =>
    checks.judge(id, () => {
      if (offending.length === 0) return ok(`${answered.length} answers looked at`);
      const seen = distinctAnswers(offending).map(({ first, count }) => `${what(first)}${count > 1 ? ` (${count} times)` : ""}`);
      return level(`${seen.join("; ")}: ${fix}`);
    }, distinctAnswers(offending).map(({ first }) => first.exchange));
  const answer = (result: CallResult) => result.answer ?? { status: 0, contentType: "", body: "" };

  const unexplained = answered.filter((result) => statusOf(result) === 500 && explanationProblem(bodyOf(result), answer(result).contentType));
  over(
    "errors.explained",
    unexplained,
    (result) => `${describe(result)} answered 500 with ${explanationProblem(bodyOf(result), answer(result).contentType)}`,
    "say in a sentence of plain text what went wrong",
  );
  // The "pool needed" answer is JSON by contract: the platform decodes it, its user never sees it.
  const poolNeeded = (result: CallResult) => result.exchange.path === "/resources/plans" && isPoolRequired(statusOf(result) ?? 0, bodyOf(result));
  const notText = answered.filter(
    (result) =>
      (statusOf(result) ?? 0) >= 400 && bodyOf(result).trim() !== "" && !poolNeeded(result) && errorTextProblem(bodyOf(result), answer(result).contentType),
  );
  over(
    "errors.plain-text",
    notText,
    (result) => `${describe(result)} answered ${statusOf(result)} with ${errorTextProblem(bodyOf(result), answer(result).contentType)}`,
    "answer errors with a short plain-text sentence; the platform shows it to its user as it is",
  );

  const answered405 = answered.filter((result) => statusOf(result) === 405);
  // On info and plans any non-200 reads as "nothing to show": a 405 there only warns, so it is
  // listed only when no other 405 fails the check.
  const harmless = (result: CallResult) => result.exchange.method === "GET" && /^\/resources\/(plans|<instance>)$/.test(routeOf(result.exchange.path));
  const harmful405 = answered405.filter((result) => !harmless(result));
  over(
    "transport.no-405",
    harmful405.length > 0 ? harmful405 : answered405,
    (result) => `${describe(result)} answered 405`,
    "answer 404 on a route the provider does not support",
    harmful405.length > 0 ? problem : should,
  );
  over(
    "transport.no-redirect",
    answered.filter((result) => {
      const status = statusOf(result) ?? 0;
      return status >= 300 && status < 400;
    }),
    (result) => `${describe(result)} answered ${statusOf(result)}${result.exchange.response?.location ? ` to ${result.exchange.response.location}` : ""}`,
    "serve every route at the exact path the platform calls, without redirects",
  );
  const disclosing = answered.filter((result) => disclosedSecret(bodyOf(result), result.secrets));
  over(
    "transport.no-secret",
    disclosing,
    (result) => `${describe(result)} answered ${statusOf(result)} with ${disclosedSecret(bodyOf(result), result.secrets)!.what} in its body (redacted here)`,
    "never put the credentials a call carries in an answer, not even in a debug page: the platform shows error bodies to its users; turn the framework's debug mode off and change the password",
  );
  over(
    "transport.json-content-type",
    // Bodies that are not JSON at all fail their own shape checks.
    context.jsonAnswers.filter((result) => succeeded(result) && isJson(bodyOf(result)) && !isJsonContentType(answer(result).contentType)),
    (result) => `${describe(result)} answered ${statusOf(result)} with ${answer(result).contentType || "no content type"}`,
    "send JSON as application/json: today's platform copes, stricter clients do not",
  );
}
