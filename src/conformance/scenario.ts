/**
 * The run itself: the calls the platform makes over an instance's life, in the platform's
 * order, each answer judged against the checks it bears on. Steps whose checks were not asked
 * for are not run; calls on an instance whose earlier step failed are not sent.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { PlatformCalls, RunNames } from "./calls.js";
import type { Call, CallResult, PlatformClient } from "../provider-client/client.js";
import { ok, problem, skip, type Recorder, type Verdict } from "./recorder.js";
import { bindResultProblem, firstPlan, infoProblem, plansProblem } from "../provider-client/shapes.js";
import type { ProgressEvent, Variant } from "./types.js";

export interface ScenarioContext {
  client: PlatformClient;
  recorder: Recorder;
  variant: Variant;
  names: RunNames;
  /** Built once the plan is known (it comes from the plan list). */
  callsFor: (plan: string | undefined) => PlatformCalls;
  plan?: string;
  provisionTimeoutMs: number;
  pollIntervalMs: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
  /** Instances the provider may now hold: the run removes them at the end, whatever happened. */
  created: Set<string>;
}

/** The provider did not answer the first call at all. */
export class ProviderUnreachableError extends Error {
  constructor(url: string, reason: string) {
    super(`Cannot reach the provider at ${url}: ${reason}. Check the URL and that the provider is running.`);
    this.name = "ProviderUnreachableError";
  }
}

/** Thrown out of a step when the run's signal aborts; the run then cleans up. */
export class Interrupted extends Error {}

const is2xx = (status: number) => status >= 200 && status < 300;
const only = (expected: number) => (status: number) => status === expected;

function expectStatus(result: CallResult, accept: (status: number) => boolean, expected: string): Verdict {
  if (!result.answer) return problem(`${describe(result)} got no answer: ${result.error}`);
  return accept(result.answer.status) ? ok() : problem(`${describe(result)} answered ${result.answer.status}, expected ${expected}`);
}

function describe(result: CallResult): string {
  return `${result.exchange.method} ${result.exchange.path}`;
}

const bodyOf = (result: CallResult) => result.answer?.body ?? "";
const statusOf = (result: CallResult | undefined) => result?.answer?.status;
const succeeded = (result: CallResult | undefined) => is2xx(statusOf(result) ?? 0);

export async function runScenario(context: ScenarioContext): Promise<void> {
  const { recorder: checks, variant, names } = context;
  const send = async (call: Call): Promise<CallResult> => {
    const result = await context.client.send(call, context.signal);
    if (context.signal?.aborted) throw new Interrupted();
    // A provider that wrongly accepts a call on the unknown instance may have created it: remove it too.
    if (succeeded(result) && call.path.startsWith(`/resources/${names.missing}`)) context.created.add(names.missing);
    return result;
  };

  const plan = await planStep(context, send);
  const calls = context.callsFor(plan);

  if (variant !== "B") await authStep(context, send, calls);
  await notFoundStep(context, send, calls);

  const instance = names.instance;
  // Every check on the instance needs create.status, so this is "any instance check asked for".
  if (checks.wants("create.status")) {
    context.created.add(instance);
    const create = await send(calls.create(instance));
    checks.judge("create.status", () => expectStatus(create, is2xx, "2xx"), [create.exchange]);
  }
  if (checks.passed("create.status")) {
    const bindEarly = await awaitReady(context, send, calls);
    if (checks.wants("create.duplicate")) {
      const duplicate = await send(calls.create(instance));
      checks.judge("create.duplicate", () => expectStatus(duplicate, only(409), "409 (already exists)"), [duplicate.exchange]);
    }
    if (checks.passed("status.ready")) await boundSteps(context, send, calls, bindEarly);
    if (checks.wants("destroy.status")) {
      const destroy = await send(calls.destroy(instance));
      checks.judge("destroy.status", () => expectStatus(destroy, is2xx, "2xx"), [destroy.exchange]);
      if (succeeded(destroy)) context.created.delete(instance);
    }
  }

  judgeWholeRun(context);
}

type Send = (call: Call) => Promise<CallResult>;

/** Lists the plans (first call of the run: it also tells whether the provider is there at all). */
async function planStep(context: ScenarioContext, send: Send): Promise<string | undefined> {
  const { recorder: checks, variant } = context;
  const withoutPlan = context.callsFor(undefined);
  // Variant B lists no plans: its first call is the status of the unknown instance.
  const first = variant === "B" ? withoutPlan.status(context.names.missing) : withoutPlan.plans();
  const result = await send(first);
  if (!result.answer) throw new ProviderUnreachableError(context.client.url, result.error ?? "no answer");
  if (variant === "B") return context.plan;
  checks.judge("plans.status", () => expectStatus(result, only(200), "200"), [result.exchange]);
  checks.judge("plans.shape", () => {
    const wrong = plansProblem(bodyOf(result));
    return wrong ? problem(wrong) : ok();
  }, [result.exchange]);
  return context.plan ?? firstPlan(bodyOf(result));
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
    if (!checks.wants(id)) continue;
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
    checks.judge(id, () => expectStatus(result, only(404), "404"), [result.exchange]);
  }
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
        early = await send(calls.bindApp(names.instance));
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
    } else if (status === 404 && variant === "current") {
      verdict = ok("the status call answers 404 (not implemented); the instance is taken as ready");
    } else if (status === undefined) {
      verdict = problem(`${describe(result)} got no answer: ${result.error}`);
    } else {
      verdict = problem(`${describe(result)} answered ${status}, expected 202 while pending then 204 (or 200 with the status text)`);
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

  const emptyTexts = answers.filter((result) => statusOf(result) === 200 && bodyOf(result).trim() === "");
  checks.judge("status.text-body", () => {
    if (!answers.some((result) => statusOf(result) === 200)) return skip("the status call never answered 200");
    return emptyTexts.length === 0 ? ok() : problem(`${describe(emptyTexts[0]!)} answered 200 with an empty body: answer 204 when ready, or 200 with the status text`);
  }, emptyTexts.slice(0, 1).map((result) => result.exchange));
  return early;
}

/** Everything done to a ready instance: binds, update, info, unbinds. */
async function boundSteps(context: ScenarioContext, send: Send, calls: PlatformCalls, early: CallResult | undefined): Promise<void> {
  const { recorder: checks, names } = context;
  const instance = names.instance;
  const bindResult = (result: CallResult, stringsOnly: boolean) => () => {
    const wrong = bindResultProblem(bodyOf(result), stringsOnly);
    return wrong ? problem(`${describe(result)}: ${wrong}`) : ok();
  };

  let bound = succeeded(early);
  if (checks.wants("bind-app.status")) {
    const bind = await send(calls.bindApp(instance));
    bound ||= succeeded(bind);
    checks.judge("bind-app.status", () => expectStatus(bind, is2xx, "2xx"), [bind.exchange]);
    checks.judge("bind-app.json", bindResult(bind, false), [bind.exchange]);
    checks.judge("bind-app.env-strings", bindResult(bind, true), [bind.exchange]);
    if (checks.wants("bind-app.rebind") && checks.passed("bind-app.json")) {
      const again = await send(calls.bindApp(instance));
      checks.judge(
        "bind-app.rebind",
        () => (succeeded(again) ? bindResult(again, false)() : expectStatus(again, is2xx, "2xx")),
        [again.exchange],
      );
    }
  }

  if (checks.wants("bind-unit.status")) {
    const bindUnit = await send(calls.bindUnit(instance));
    checks.judge("bind-unit.status", () => expectStatus(bindUnit, is2xx, "2xx"), [bindUnit.exchange]);
    if (succeeded(bindUnit)) {
      const unbindUnit = await send(calls.unbindUnit(instance));
      checks.judge("bind-unit.unbind", () => expectStatus(unbindUnit, is2xx, "2xx"), [unbindUnit.exchange]);
    }
  }

  if (checks.wants("bind-job.status")) {
    const bindJob = await send(calls.bindJob(instance));
    checks.judge("bind-job.status", () => expectStatus(bindJob, (status) => is2xx(status) || status === 404, "2xx, or 404 when not supported"), [bindJob.exchange]);
    checks.judge("bind-job.supported", () => (statusOf(bindJob) === 404 ? problem("job binds answer 404 (not supported)") : ok()), [bindJob.exchange]);
    checks.judge("bind-job.result", bindResult(bindJob, true), [bindJob.exchange]);
    if (succeeded(bindJob)) {
      const unbindJob = await send(calls.unbindJob(instance));
      checks.judge("bind-job.unbind", () => expectStatus(unbindJob, is2xx, "2xx"), [unbindJob.exchange]);
    }
  }

  if (checks.wants("update.status")) {
    const update = await send(calls.update(instance));
    checks.judge("update.status", () => expectStatus(update, (status) => is2xx(status) || status === 404, "2xx, or 404 when not supported"), [update.exchange]);
    checks.judge("update.supported", () => (statusOf(update) === 404 ? problem("updates answer 404 (not supported)") : ok()), [update.exchange]);
  }

  if (checks.wants("info.status")) {
    const info = await send(calls.info(instance));
    checks.judge("info.status", () => expectStatus(info, (status) => status === 200 || status === 404, "200, or 404 when there is no extra info"), [info.exchange]);
    checks.judge("info.supported", () => (statusOf(info) === 404 ? problem("the info call answers 404 (no extra info)") : ok()), [info.exchange]);
    checks.judge("info.shape", () => {
      const wrong = infoProblem(bodyOf(info));
      return wrong ? problem(wrong) : ok();
    }, [info.exchange]);
  }

  if (bound && checks.wants("unbind-app.status")) {
    const unbind = await send(calls.unbindApp(instance));
    checks.judge("unbind-app.status", () => expectStatus(unbind, is2xx, "2xx"), [unbind.exchange]);
    if (checks.wants("unbind-app.repeat")) {
      const again = await send(calls.unbindApp(instance));
      checks.judge("unbind-app.repeat", () => expectStatus(again, is2xx, "2xx (an unbind of a binding already gone succeeds)"), [again.exchange]);
    }
  }
}

const MAX_EVIDENCE = 5;

/** Checks over every answer of the run: error bodies, 405s, redirects. */
function judgeWholeRun(context: ScenarioContext): void {
  const { recorder: checks, client } = context;
  const answered = client.log.filter((result) => result.answer !== undefined);
  const over = (id: string, offending: CallResult[], what: (result: CallResult) => string, fix: string) =>
    checks.judge(id, () =>
      offending.length === 0
        ? ok(`${answered.length} answers looked at`)
        : problem(`${offending.slice(0, MAX_EVIDENCE).map(what).join("; ")}${offending.length > MAX_EVIDENCE ? ` and ${offending.length - MAX_EVIDENCE} more` : ""}: ${fix}`),
      offending.slice(0, MAX_EVIDENCE).map((result) => result.exchange),
    );

  over(
    "errors.explained",
    answered.filter((result) => statusOf(result) === 500 && bodyOf(result).trim() === ""),
    (result) => `${describe(result)} answered 500 with an empty body`,
    "say what went wrong in the body",
  );
  over(
    "errors.plain-text",
    answered.filter((result) => (statusOf(result) ?? 0) >= 400 && bodyOf(result).trim() !== "" && !isShortPlainText(result)),
    (result) => `${describe(result)} answered ${statusOf(result)} with ${result.answer?.contentType || "no content type"} (${bodyOf(result).length} characters)`,
    "answer errors as short text/plain messages",
  );
  over(
    "transport.no-405",
    answered.filter((result) => statusOf(result) === 405),
    (result) => `${describe(result)} answered 405`,
    "answer 404 on a route the provider does not support",
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
}

const MAX_ERROR_TEXT = 1000;

function isShortPlainText(result: CallResult): boolean {
  const answer = result.answer;
  return !!answer && answer.contentType.startsWith("text/plain") && answer.body.length <= MAX_ERROR_TEXT;
}
