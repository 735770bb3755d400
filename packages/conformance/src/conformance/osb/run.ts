/**
 * `runOsbConformance`: plays a platform against an Open Service Broker (API v2.17) and reports
 * every check of `osb/checks.ts`, in the same report as the native run. Whatever happens, the
 * instances the run created are deprovisioned before it returns.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Ledger } from "../ledger.js";
import { Recorder, ok, problem, skip, type Verdict } from "../recorder.js";
import { ConformanceUsageError } from "../run.js";
import { CredentialsRefusedError, Interrupted, ProviderUnreachableError } from "../scenario.js";
import type { ConformanceReport, OsbCheckGroup, ProgressEvent } from "../types.js";
import { OSB_CHECKS } from "./checks.js";
import { BrokerClient, type BrokerCall, type BrokerResult } from "./client.js";
import { errorFieldsProblem, errorMediaProblem } from "./error-bodies.js";

export interface OsbConformanceOptions {
  /** Base URL of the broker, e.g. `http://127.0.0.1:8080` (the kit adds `/v2/...`). */
  url: string;
  username: string;
  password: string;
  /** Only run (and report) these groups; the steps they need still run. Default: all. */
  groups?: readonly OsbCheckGroup[];
  /** How long an operation in the background may take. Default 120 000 ms. */
  provisionTimeoutMs?: number;
  /** Delay between polls of last_operation. Default 500 ms. */
  pollIntervalMs?: number;
  /** Per-request timeout. Default 30 000 ms. */
  requestTimeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (event: ProgressEvent) => void;
}

interface Plan {
  id: string;
  name: string;
  /** `plan_updateable`: the plan's, else its offering's (default false). */
  updateable: boolean;
}

interface Offering {
  id: string;
  bindable: boolean;
  /** `instances_retrievable`: the kit can read an instance's plan back (GET). */
  instancesRetrievable: boolean;
  plans: Plan[];
}

/** An instance the run made, with what its deprovision must name (its plan now). */
interface Made {
  serviceId: string;
  planId: string;
}

/** A binding the run made, with what its unbind must name. */
interface Bound {
  instanceId: string;
  bindingId: string;
  serviceId: string;
  planId: string;
}

/** How a PATCH ended: its answer and, after a 202, the end of its polling. */
interface Patched {
  result: BrokerResult;
  end?: PollEnd;
  /** 200, or 202 and then `succeeded`. */
  applied: boolean;
}

/** How a poll of last_operation ended: its last answer's state, or the status that stopped it. */
interface PollEnd {
  state: "succeeded" | "failed" | "gone" | "timeout" | "error";
  polls: BrokerResult[];
}

const STATES = ["in progress", "succeeded", "failed"];
const APP = "pkc-app";
/** How many times the kit races two requests before it concludes the broker serialises them. */
const RACE_ROUNDS = 3;
/** OSB 2.17's REQUIRED fields of a provision ("Provisioning", Body). */
const REQUIRED_PROVISION_FIELDS = ["service_id", "plan_id", "organization_guid", "space_guid"] as const;

export async function runOsbConformance(options: OsbConformanceOptions): Promise<ConformanceReport> {
  const started = Date.now();
  if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol)) {
    throw new ConformanceUsageError(`"${options.url}" is not an http(s) URL: give the broker's base URL, e.g. http://127.0.0.1:8080 (the kit adds /v2/...)`);
  }
  const client = new BrokerClient({ url: options.url, username: options.username, password: options.password, timeoutMs: options.requestTimeoutMs ?? 30_000 });
  const recorder = new Recorder("current", options.groups, options.onProgress, OSB_CHECKS);
  const run = new OsbRun(client, recorder, options);
  let interrupted = false;
  try {
    await run.play();
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    interrupted = true;
  } finally {
    await run.ledger.removeAll();
  }
  const { results, counts } = recorder.finish(interrupted ? "the run was interrupted before this check" : "not reached");
  return {
    url: client.url,
    protocol: "osb",
    variant: "current",
    encoding: "json",
    instance: run.instanceId,
    passed: counts.fail === 0 && !interrupted,
    counts,
    results,
    notes: [],
    leftovers: run.ledger.leftovers,
    interrupted,
    durationMs: Date.now() - started,
  };
}

class OsbRun {
  readonly instanceId = randomUUID();
  /** What the run made and has not removed: removed at the end. */
  readonly ledger = new Ledger();
  /** The instances the run made, with their plan now. */
  private readonly made = new Map<string, Made>();
  /** The instances of `syncProvisions` provisioned at once (201), by plan id. */
  private readonly ready = new Map<string, string>();
  /** Every poll of an instance's last_operation: judged together at the end. */
  private readonly polls: BrokerResult[] = [];
  private readonly timeoutMs: number;
  private readonly pollIntervalMs: number;

  constructor(
    private readonly client: BrokerClient,
    private readonly checks: Recorder,
    private readonly options: OsbConformanceOptions,
  ) {
    this.timeoutMs = options.provisionTimeoutMs ?? 120_000;
    this.pollIntervalMs = options.pollIntervalMs ?? 500;
  }

  async play(): Promise<void> {
    const offering = await this.catalog();
    await this.auth();
    await this.version();
    await this.deprovisionUnknown(offering);
    await this.lastOperationUnknown(offering);
    // An unknown route: its 404 is judged only by the error-body checks.
    await this.send({ method: "GET", path: "/v2/pkc-no-such-route" });
    if (offering) {
      await this.malformedProvision(offering);
      const asyncPlans = await this.syncProvisions(offering);
      await this.requiredFields(offering, offering.plans.find((candidate) => !asyncPlans.has(candidate.id)) ?? offering.plans[0]);
      const plan = offering.plans.find((candidate) => asyncPlans.has(candidate.id)) ?? offering.plans[0];
      if (plan && (await this.provision(offering, plan.id))) {
        await this.rerequests(offering, plan.id);
        await this.binding(offering, plan.id);
        await this.updates(offering);
        await this.deprovision(offering, this.made.get(this.instanceId)?.planId ?? plan.id);
      } else {
        this.checks.skipNeeding("provisioned-instance", "the run's instance was not provisioned: nothing to update");
      }
    }
    this.checks.judge("osb-last-operation.states", () => this.statesVerdict(), this.polls.map((poll) => poll.exchange));
    this.judgeErrorAnswers("osb-errors.body", errorFieldsProblem);
    this.judgeErrorAnswers("osb-errors.json", errorMediaProblem);
  }

  /** The catalog twice (the second time for stable ids): also tells whether the broker is there and takes the credentials. */
  private async catalog(): Promise<Offering | undefined> {
    const first = await this.send({ method: "GET", path: "/v2/catalog" });
    if (!first.answer) throw new ProviderUnreachableError(this.client.url, first.exchange.error ?? "no answer");
    const second = await this.send({ method: "GET", path: "/v2/catalog" });
    if (first.answer.status === 401 && second.answer?.status === 401) throw new CredentialsRefusedError(this.client.url);
    this.checks.judge("osb-catalog.status", () => catalogStatus(first), [first.exchange]);
    const services = (first.answer.json as { services: unknown[] } | undefined)?.services;
    this.checks.judge("osb-catalog.shape", () => catalogShape(services ?? []), [first.exchange]);
    this.checks.judge("osb-catalog.stable-ids", () => stableIds(first, second), [first.exchange, second.exchange]);
    if (!this.checks.passed("osb-catalog.shape")) return undefined;
    const offerings = (services as Array<Record<string, unknown>>).map(
      (service): Offering => ({
        id: service.id as string,
        bindable: service.bindable === true || (service.plans as Array<Record<string, unknown>>).some((plan) => plan.bindable === true),
        instancesRetrievable: service.instances_retrievable === true,
        plans: (service.plans as Array<Record<string, unknown>>).map((plan) => ({
          id: plan.id as string,
          name: plan.name as string,
          // A plan's own plan_updateable takes precedence over its offering's ("Service Plan Object").
          updateable: typeof plan.plan_updateable === "boolean" ? plan.plan_updateable : service.plan_updateable === true,
        })),
      }),
    );
    // A bindable offering lets the binding checks run.
    return offerings.find((offering) => offering.bindable) ?? offerings[0];
  }

  private async auth(): Promise<void> {
    const none = await this.send({ method: "GET", path: "/v2/catalog", credentials: "none" });
    this.checks.judge("osb-auth.no-credentials", () => expect(none, [401], "401"), [none.exchange]);
    const wrong = await this.send({ method: "GET", path: "/v2/catalog", credentials: { password: `${this.client.password}x` } });
    this.checks.judge("osb-auth.wrong-password", () => expect(wrong, [401], "401"), [wrong.exchange]);
  }

  private async version(): Promise<void> {
    const old = await this.send({ method: "GET", path: "/v2/catalog", version: "1.0" });
    this.checks.judge(
      "osb-version.unsupported",
      () => {
        if (old.answer?.status === 200) return ok("served API 1.0 (refusing it is a MAY)");
        if (old.answer?.status === 412) return ok("refused API 1.0 with 412");
        return problem(`${describe(old)} with X-Broker-API-Version 1.0 answered ${statusOf(old)}: serve it (200) or refuse it with 412 Precondition Failed`);
      },
      [old.exchange],
    );
  }

  private async deprovisionUnknown(offering: Offering | undefined): Promise<void> {
    const query = offering ? idsQuery(offering.id, offering.plans[0]?.id ?? "") : "";
    const gone = await this.send({ method: "DELETE", path: `/v2/service_instances/${randomUUID()}?accepts_incomplete=true${query}` });
    this.checks.judge("osb-deprovision.gone", () => expect(gone, [410], "410 Gone"), [gone.exchange]);
  }

  private async lastOperationUnknown(offering: Offering | undefined): Promise<void> {
    // No `operation`: the kit never started one, so nothing tells the broker the instance was ever there.
    const query = offering ? pollQuery(offering.id, offering.plans[0]?.id ?? "", undefined) : "";
    const unknown = await this.send({ method: "GET", path: `/v2/service_instances/${randomUUID()}/last_operation${query}` });
    this.checks.judge("osb-last-operation.unknown", () => expect(unknown, [404], "404 Not Found"), [unknown.exchange]);
  }

  private async malformedProvision(offering: Offering): Promise<void> {
    const planId = offering.plans[0]?.id ?? "";
    const notJson = await this.provisionExpectingRefusal(offering.id, planId, { rawBody: '{"service_id": ' });
    const noIds = await this.provisionExpectingRefusal(offering.id, planId, { body: { organization_guid: "pkc-org", space_guid: "pkc-space" } });
    const wrong = [notJson, noIds].filter((result) => result.answer?.status !== 400);
    this.checks.judge(
      "osb-provision.malformed",
      () => (wrong.length === 0 ? ok() : problem(wrong.map((result) => `${result === notJson ? "a body that is not JSON" : "no service_id nor plan_id"}: ${statusOf(result)}`).join("; ") + ", not 400 Bad Request")),
      (wrong.length > 0 ? wrong : [notJson, noIds]).map((result) => result.exchange),
    );
  }

  /** Each REQUIRED field of a provision left out, then sent empty, in turn. */
  private async requiredFields(offering: Offering, plan: Plan | undefined): Promise<void> {
    if (!plan) return;
    const wrong: Array<{ what: string; result: BrokerResult }> = [];
    for (const field of REQUIRED_PROVISION_FIELDS) {
      for (const empty of [false, true]) {
        const body = provisionBody(offering.id, plan.id);
        if (empty) body[field] = "";
        else delete body[field];
        const result = await this.provisionExpectingRefusal(offering.id, plan.id, { body });
        if (result.answer?.status !== 400) wrong.push({ what: empty ? `${field} "": ${statusOf(result)}` : `without ${field}: ${statusOf(result)}`, result });
      }
    }
    this.checks.judge(
      "osb-provision.required-fields",
      () => (wrong.length === 0 ? ok() : problem(`${wrong.map(({ what }) => what).join("; ")}, not 400 Bad Request`)),
      wrong.map(({ result }) => result.exchange),
    );
  }

  /** A provision of a new id the broker should refuse; if it made the instance anyway, it is removed at the end. */
  private async provisionExpectingRefusal(serviceId: string, planId: string, call: Pick<BrokerCall, "body" | "rawBody">): Promise<BrokerResult> {
    const id = randomUUID();
    const result = await this.send({ method: "PUT", path: `/v2/service_instances/${id}?accepts_incomplete=true`, ...call });
    if (isSuccess(result) || !result.answer) this.madeInstance(id, serviceId, planId);
    return result;
  }

  /** Each plan provisioned by a platform that cannot poll; returns the plans that answered AsyncRequired. */
  private async syncProvisions(offering: Offering): Promise<Set<string>> {
    const asyncPlans = new Set<string>();
    const answers: BrokerResult[] = [];
    const problems: string[] = [];
    for (const plan of offering.plans) {
      const id = randomUUID();
      const result = await this.send({ method: "PUT", path: `/v2/service_instances/${id}`, body: provisionBody(offering.id, plan.id) });
      answers.push(result);
      if (isSuccess(result) || !result.answer) this.madeInstance(id, offering.id, plan.id);
      const status = result.answer?.status;
      if (status === 201) this.ready.set(plan.id, id);
      const error = errorCode(result);
      if (status === 422 && error === "AsyncRequired") asyncPlans.add(plan.id);
      else if (status === 202) problems.push(`plan "${plan.name}": ${describe(result)} answered 202 though the platform did not send accepts_incomplete=true`);
      else if (status === 422) problems.push(`plan "${plan.name}": ${describe(result)} answered 422 with error ${JSON.stringify(error)}, not "AsyncRequired"`);
      else if (status !== 201) problems.push(`plan "${plan.name}": ${describe(result)} answered ${statusOf(result)}, not 201 or 422 AsyncRequired`);
    }
    const shown = problems.length > 0 ? answers.filter((result) => result.answer?.status !== 201 && !(result.answer?.status === 422 && errorCode(result) === "AsyncRequired")) : answers;
    this.checks.judge("osb-provision.sync", () => (problems.length > 0 ? problem(problems.join("; ")) : ok()), shown.map((result) => result.exchange));
    return asyncPlans;
  }

  /** The run's instance, with accepts_incomplete=true, followed to the end; true when it is provisioned. */
  private async provision(offering: Offering, planId: string): Promise<boolean> {
    const path = `/v2/service_instances/${this.instanceId}`;
    const result = await this.send({ method: "PUT", path: `${path}?accepts_incomplete=true`, body: provisionBody(offering.id, planId) });
    if (isSuccess(result) || !result.answer) this.madeInstance(this.instanceId, offering.id, planId);
    const status = result.answer?.status;
    if (status === 201) {
      this.checks.judge("osb-provision.async", () => ok("provisioned at once (201)"), [result.exchange]);
      return true;
    }
    if (status !== 202) {
      this.checks.judge("osb-provision.async", () => problem(`${describe(result)} answered ${statusOf(result)}, not 201 or 202`), [result.exchange]);
      return false;
    }
    const operation = operationOf(result);
    if (operation === null) {
      this.checks.judge("osb-provision.async", () => problem(`${describe(result)} answered 202 with an \`operation\` that is not a string`), [result.exchange]);
      return false;
    }
    const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operation)}`, this.instanceId);
    this.polls.push(...end.polls);
    const last = end.polls.at(-1);
    const evidence = [result.exchange, ...(last ? [last.exchange] : [])];
    const verdict = end.state === "succeeded" ? ok() : problem(`202, then last_operation ${pollEndText(end, this.timeoutMs)}`);
    this.checks.judge("osb-provision.async", () => verdict, evidence);
    return end.state === "succeeded";
  }

  private async rerequests(offering: Offering, planId: string): Promise<void> {
    const path = `/v2/service_instances/${this.instanceId}?accepts_incomplete=true`;
    const again = await this.send({ method: "PUT", path, body: provisionBody(offering.id, planId) });
    this.checks.judge(
      "osb-provision.identical",
      () => (again.answer?.status === 200 ? ok() : problem(`${describe(again)} answered ${statusOf(again)} to the same provision of an instance already provisioned`)),
      [again.exchange],
    );
    const same = provisionBody(offering.id, planId);
    const otherPlan = offering.plans.find((plan) => plan.id !== planId);
    const conflicts = await this.conflicts([
      ...(otherPlan ? [{ what: `plan "${otherPlan.name}"`, call: { method: "PUT" as const, path, body: { ...same, plan_id: otherPlan.id } } }] : []),
      { what: "another organization_guid", call: { method: "PUT", path, body: { ...same, organization_guid: "pkc-org-other" } } },
      { what: "another space_guid", call: { method: "PUT", path, body: { ...same, space_guid: "pkc-space-other" } } },
      { what: "other parameters", call: { method: "PUT", path, body: { ...same, parameters: { "pkc-conflict": randomUUID() } } }, invalidData: true },
    ]);
    this.checks.judge("osb-provision.conflict", () => conflicts.verdict, conflicts.evidence);
  }

  /**
   * Each request in turn, to be answered 409 (or 400 where the request may carry data the broker
   * does not take): the verdict names every other answer.
   */
  private async conflicts(requests: Array<{ what: string; call: BrokerCall; invalidData?: boolean }>): Promise<{ verdict: Verdict; evidence: BrokerResult["exchange"][] }> {
    const wrong: Array<{ what: string; result: BrokerResult }> = [];
    const all: BrokerResult[] = [];
    for (const { what, call, invalidData } of requests) {
      const result = await this.send(call);
      all.push(result);
      const status = result.answer?.status;
      if (status !== 409 && !(invalidData && status === 400)) wrong.push({ what, result });
    }
    if (wrong.length === 0) return { verdict: ok(), evidence: all.map((result) => result.exchange) };
    const text = wrong.map(({ what, result }) => `with ${what}: ${statusOf(result)}`).join("; ");
    return { verdict: problem(`${describe((wrong[0] as { result: BrokerResult }).result)} of an existing id answered ${text}, not 409 Conflict`), evidence: wrong.map(({ result }) => result.exchange) };
  }

  private async binding(offering: Offering, planId: string): Promise<void> {
    if (!offering.bindable) {
      this.checks.skipNeeding("bindable-offering", "the offering is not bindable: nothing to bind");
      return;
    }
    const bindingId = randomUUID();
    const path = `/v2/service_instances/${this.instanceId}/service_bindings/${bindingId}`;
    const body = (app: string, plan = planId, parameters?: Record<string, string>) => ({
      service_id: offering.id,
      plan_id: plan,
      app_guid: app,
      bind_resource: { app_guid: app },
      ...(parameters ? { parameters } : {}),
    });
    const created = await this.bind(offering.id, planId, bindingId, body(APP));
    let withCredentials = created;
    if (created.answer?.status === 202) {
      const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operationOf(created) ?? undefined)}`, this.instanceId);
      if (end.state !== "succeeded") {
        this.checks.judge("osb-binding.created", () => problem(`202, then the binding's last_operation ${pollEndText(end, this.timeoutMs)}`), [created.exchange]);
        return;
      }
      withCredentials = await this.send({ method: "GET", path, secretAnswer: true });
    }
    this.checks.judge("osb-binding.created", () => bindingVerdict(created, withCredentials), [created.exchange, ...(withCredentials === created ? [] : [withCredentials.exchange])]);
    if (!this.checks.passed("osb-binding.created")) return;

    const again = await this.send({ method: "PUT", path: `${path}?accepts_incomplete=true`, body: body(APP), secretAnswer: true });
    this.checks.judge("osb-binding.identical", () => (again.answer?.status === 200 ? ok() : problem(`${describe(again)} answered ${statusOf(again)} to the same binding again`)), [again.exchange]);
    const bindCall = (request: Record<string, unknown>): BrokerCall => ({ method: "PUT", path: `${path}?accepts_incomplete=true`, body: request, secretAnswer: true });
    const otherPlan = offering.plans.find((plan) => plan.id !== planId);
    const conflicts = await this.conflicts([
      { what: "another app", call: bindCall(body(`${APP}-other`)) },
      ...(otherPlan ? [{ what: `plan "${otherPlan.name}"`, call: bindCall(body(APP, otherPlan.id)) }] : []),
      { what: "other parameters", call: bindCall(body(APP, planId, { "pkc-conflict": randomUUID() })), invalidData: true },
    ]);
    this.checks.judge("osb-binding.conflict", () => conflicts.verdict, conflicts.evidence);
    await this.concurrentBinds(offering, planId, (app) => body(app));

    const unbindPath = `${path}?accepts_incomplete=true${idsQuery(offering.id, planId)}`;
    const unbound = await this.send({ method: "DELETE", path: unbindPath });
    if (unbound.answer?.status === 200 || unbound.answer?.status === 410) this.ledger.delete(`${this.instanceId}/${bindingId}`);
    let unbindVerdict = expect(unbound, [200, 202], "200 (or 202)");
    if (unbound.answer?.status === 202) {
      const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operationOf(unbound) ?? undefined)}`, this.instanceId);
      if (end.state !== "succeeded" && end.state !== "gone") unbindVerdict = problem(`202, then the binding's last_operation ${pollEndText(end, this.timeoutMs)}`);
      else this.ledger.delete(`${this.instanceId}/${bindingId}`);
    }
    this.checks.judge("osb-binding.unbind", () => unbindVerdict, [unbound.exchange]);
    if (!this.checks.passed("osb-binding.unbind")) return;
    const gone = await this.send({ method: "DELETE", path: unbindPath });
    this.checks.judge("osb-binding.unbind-gone", () => expect(gone, [410], "410 Gone"), [gone.exchange]);
  }

  /**
   * The update checks, on the run's instance and on those `syncProvisions` made: parameters
   * alone, a plan change of a plan that is not plan_updateable, one of a plan that is, and that
   * plan change raced by an update of parameters.
   */
  private async updates(offering: Offering): Promise<void> {
    const instances = [this.instanceId, ...this.ready.values()];
    const planOf = (id: string) => offering.plans.find((plan) => plan.id === this.made.get(id)?.planId);
    const onPlan = (updateable: boolean) => instances.find((id) => planOf(id)?.updateable === updateable);

    const before = planOf(this.instanceId);
    const parameters = await this.patch(offering, this.instanceId, { parameters: { "pkc-update": randomUUID() } });
    const seen = parameters.applied ? await this.planSeen(offering, this.instanceId) : undefined;
    this.checks.judge("osb-update.parameters", () => parametersVerdict(parameters, before, seen, offering, this.timeoutMs), [parameters.result.exchange, ...(seen ? [seen.result.exchange] : [])]);

    if (offering.plans.length < 2) {
      this.checks.skipNeeding("two-plans", "the offering has one plan: there is no plan to change to");
      return;
    }
    const fixed = onPlan(false);
    if (fixed === undefined) this.checks.judge("osb-update.not-updateable", () => skip("every plan the run provisioned is plan_updateable"));
    else await this.updateNotUpdateable(offering, fixed);

    const changing = onPlan(true);
    if (changing === undefined) {
      this.checks.skipNeeding("updateable-plan", "no plan the run provisioned is plan_updateable: a platform may not change it");
      return;
    }
    await this.updatePlan(offering, changing);
  }

  private async updateNotUpdateable(offering: Offering, id: string): Promise<void> {
    const from = this.made.get(id)?.planId ?? "";
    const to = offering.plans.find((plan) => plan.id !== from) as Plan;
    const patched = await this.patch(offering, id, { plan_id: to.id, previous_values: { plan_id: from } });
    const status = patched.result.answer?.status;
    const evidence = [patched.result.exchange, ...(patched.end?.polls.slice(-1).map((poll) => poll.exchange) ?? [])];
    this.checks.judge(
      "osb-update.not-updateable",
      () => {
        if (status === 422 || status === 400) return ok(`refused with ${status}`);
        if (patched.applied) return problem(`${describe(patched.result)} changed the plan of an instance whose plan is not plan_updateable (${statusOf(patched.result)}${patched.end ? ", then succeeded" : ""}), not 422`);
        return problem(`${describe(patched.result)} answered ${statusOf(patched.result)}${patched.end ? `, then last_operation ${pollEndText(patched.end, this.timeoutMs)}` : ""}, not 422 to a plan change of a plan that is not plan_updateable`);
      },
      evidence,
    );
  }

  private async updatePlan(offering: Offering, id: string): Promise<void> {
    const from = offering.plans.find((plan) => plan.id === this.made.get(id)?.planId) as Plan;
    const others = offering.plans.filter((plan) => plan.id !== from.id);
    // One that is plan_updateable too, if any: the race below changes the plan back.
    const to = others.find((plan) => plan.updateable) ?? others.at(0);
    if (to === undefined) return; // `updates` comes here only with two plans or more
    const patched = await this.patch(offering, id, { plan_id: to.id, previous_values: { plan_id: from.id } });
    const seen = patched.applied ? await this.planSeen(offering, id) : undefined;
    const evidence = [patched.result.exchange, ...(seen ? [seen.result.exchange] : [])];
    this.checks.judge("osb-update.plan", () => planChangeVerdict(patched, from, to, seen, this.timeoutMs), evidence);
    if (!this.checks.passed("osb-update.plan")) return this.checks.judge("osb-update.concurrent", () => skip("blocked"));
    if (!patched.applied) return this.checks.judge("osb-update.concurrent", () => skip(`the broker refused the plan change (${statusOf(patched.result)}): there is no plan change to race`));
    if (!to.updateable) return this.checks.judge("osb-update.concurrent", () => skip(`plan "${to.name}" is not plan_updateable: the kit may not change it back`));
    if (!offering.instancesRetrievable) return this.checks.judge("osb-update.concurrent", () => skip("the offering is not instances_retrievable: the kit cannot see which plan the instance ends on"));

    const [change, other] = await Promise.all([
      this.patch(offering, id, { plan_id: from.id, previous_values: { plan_id: to.id } }),
      this.patch(offering, id, { parameters: { "pkc-update": randomUUID() } }),
    ]);
    const after = await this.planSeen(offering, id);
    this.checks.judge(
      "osb-update.concurrent",
      () => {
        if (!change.applied) return ok(`the plan change answered ${statusOf(change.result)}, the update of parameters ${statusOf(other.result)}`);
        if (after?.planId === undefined) return skip(`${describe(after?.result ?? change.result)} showed no plan_id: the kit cannot see which plan the instance ends on`);
        if (after.planId === from.id) return ok();
        return problem(
          `the plan change to "${from.name}" answered ${statusOf(change.result)} and the update of parameters sent at once ${statusOf(other.result)}, yet the instance is then on plan ${JSON.stringify(after.planId)}: the plan change was lost`,
        );
      },
      [change.result.exchange, other.result.exchange, ...(after ? [after.result.exchange] : [])],
    );
  }

  /** A PATCH of an instance the run made, with accepts_incomplete=true, followed to its end. */
  private async patch(offering: Offering, id: string, body: Record<string, unknown>): Promise<Patched> {
    const made = this.made.get(id) as Made;
    const path = `/v2/service_instances/${id}`;
    const previousPlan = made.planId;
    const result = await this.send({ method: "PATCH", path: `${path}?accepts_incomplete=true`, body: { service_id: offering.id, context: provisionBody(offering.id, previousPlan).context, ...body } });
    let end: PollEnd | undefined;
    if (result.answer?.status === 202) {
      // The plan before the update names the instance while it changes ("Polling Last Operation").
      end = await this.poll(`${path}/last_operation${pollQuery(offering.id, previousPlan, operationOf(result) ?? undefined)}`, id);
      this.polls.push(...end.polls);
    }
    const applied = result.answer?.status === 200 || end?.state === "succeeded";
    if (applied && typeof body.plan_id === "string") made.planId = body.plan_id;
    return { result, ...(end ? { end } : {}), applied };
  }

  /** The instance's plan as the broker shows it (GET), when the offering is instances_retrievable. */
  private async planSeen(offering: Offering, id: string): Promise<{ result: BrokerResult; planId?: string } | undefined> {
    if (!offering.instancesRetrievable) return undefined;
    const made = this.made.get(id) as Made;
    const result = await this.send({ method: "GET", path: `/v2/service_instances/${id}${pollQuery(offering.id, made.planId, undefined)}` });
    const planId = (result.answer?.json as { plan_id?: unknown } | undefined)?.plan_id;
    if (result.answer?.status === 200 && typeof planId === "string") {
      made.planId = planId;
      return { result, planId };
    }
    return { result };
  }

  /** A bind of the run's instance; whatever it may have made is kept to be removed. */
  private async bind(serviceId: string, planId: string, bindingId: string, body: Record<string, unknown>): Promise<BrokerResult> {
    const path = `/v2/service_instances/${this.instanceId}/service_bindings/${bindingId}`;
    const result = await this.send({ method: "PUT", path: `${path}?accepts_incomplete=true`, body, secretAnswer: true });
    if (isSuccess(result) || !result.answer) {
      const binding: Bound = { instanceId: this.instanceId, bindingId, serviceId, planId };
      this.ledger.add(`${this.instanceId}/${bindingId}`, {
        what: { instance: this.instanceId, binding: bindingId },
        call: `DELETE ${path}?${idsQuery(serviceId, planId).slice(1)}`,
        remove: () => this.unbind(binding),
      });
    }
    return result;
  }

  /**
   * Two binds of one new binding id for two apps at once: at most one may succeed. A race shows
   * only when the two requests overlap in the broker: up to RACE_ROUNDS rounds, each with a new id.
   */
  private async concurrentBinds(offering: Offering, planId: string, body: (app: string) => Record<string, unknown>): Promise<void> {
    if (!this.checks.wants("osb-binding.concurrent") || this.checks.skipIfBlocked("osb-binding.concurrent")) return;
    let both: BrokerResult[] = [];
    for (let round = 1; round <= RACE_ROUNDS; round += 1) {
      const bindingId = randomUUID();
      both = await Promise.all([`${APP}-a`, `${APP}-b`].map((app) => this.bind(offering.id, planId, bindingId, body(app))));
      await this.ledger.remove(`${this.instanceId}/${bindingId}`);
      if (both.filter(isSuccess).length > 1) break;
    }
    const answers = both.map(statusOf).join(" and ");
    this.checks.judge(
      "osb-binding.concurrent",
      () => (both.filter(isSuccess).length > 1 ? problem(`two binds of one binding id for two apps, sent at once, answered ${answers}: both were taken as made`) : ok(`the last round answered ${answers}`)),
      both.map((result) => result.exchange),
    );
  }

  /** Removes a binding the run made, following a 202 to its end: undefined once it is gone, else why not. */
  private async unbind(binding: Bound): Promise<string | undefined> {
    const path = `/v2/service_instances/${binding.instanceId}/service_bindings/${binding.bindingId}`;
    const result = await this.client.send({ method: "DELETE", path: `${path}?accepts_incomplete=true${idsQuery(binding.serviceId, binding.planId)}` });
    let reason: string | undefined;
    if (result.answer?.status === 202) {
      const end = await this.poll(`${path}/last_operation${pollQuery(binding.serviceId, binding.planId, operationOf(result) ?? undefined)}`, binding.instanceId).catch(() => undefined);
      if (end?.state !== "gone" && end?.state !== "succeeded") reason = end ? `202, then last_operation ${pollEndText(end, this.timeoutMs)}` : "interrupted";
    } else if (result.answer?.status !== 200 && result.answer?.status !== 410) {
      reason = `${describe(result)} answered ${statusOf(result)}`;
    }
    return reason;
  }

  private async deprovision(offering: Offering, planId: string): Promise<void> {
    const path = `/v2/service_instances/${this.instanceId}`;
    const result = await this.send({ method: "DELETE", path: `${path}?accepts_incomplete=true${idsQuery(offering.id, planId)}` });
    this.checks.judge("osb-deprovision.status", () => deprovisionVerdict(result), [result.exchange]);
    if (result.answer?.status === 200) {
      this.ledger.delete(this.instanceId);
      this.checks.judge("osb-last-operation.gone", () => skip("the deprovision finished at once (200): nothing to poll"));
      return;
    }
    if (!this.checks.passed("osb-deprovision.status")) return;
    const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operationOf(result) ?? undefined)}`, this.instanceId);
    // The answer that ended the polling (410, or an error) is osb-last-operation.gone's to judge.
    this.polls.push(...(end.state === "gone" || end.state === "error" ? end.polls.slice(0, -1) : end.polls));
    if (end.state === "gone" || end.state === "succeeded") this.ledger.delete(this.instanceId);
    const last = end.polls.at(-1);
    this.checks.judge(
      "osb-last-operation.gone",
      () => (end.state === "gone" || end.state === "succeeded" ? ok() : problem(`the deprovision's last_operation ${pollEndText(end, this.timeoutMs)}`)),
      last ? [last.exchange] : [],
    );
  }

  /** Polls `path` until the operation ends (a state other than `in progress`, 410, another status) or the timeout. */
  private async poll(path: string, instance: string): Promise<PollEnd> {
    const polls: BrokerResult[] = [];
    const started = Date.now();
    for (;;) {
      const result = await this.send({ method: "GET", path });
      polls.push(result);
      const status = result.answer?.status;
      if (status === 410) return { state: "gone", polls };
      if (status !== 200) return { state: "error", polls };
      const state = (result.answer?.json as { state?: unknown } | undefined)?.state;
      if (state === "succeeded" || state === "failed") return { state, polls };
      if (state !== "in progress") return { state: "error", polls };
      const elapsedMs = Date.now() - started;
      if (elapsedMs >= this.timeoutMs) return { state: "timeout", polls };
      this.options.onProgress?.({ type: "waiting", instance, status: 202, elapsedMs, timeoutMs: this.timeoutMs });
      await sleep(this.pollIntervalMs);
      this.interruptIfAsked();
    }
  }

  private statesVerdict(): Verdict {
    if (this.polls.length === 0) return skip("the broker ran every operation at once: nothing was polled");
    const wrong = this.polls.map(pollProblem).filter((text): text is string => text !== undefined);
    return wrong.length > 0 ? problem(wrong[0] as string) : ok(`${this.polls.length} polls`);
  }

  /** Judges `id` over every answer of the run: it fails (or warns) on the first `problemOf` finds, counting the others. */
  private judgeErrorAnswers(id: string, problemOf: (result: BrokerResult) => string | undefined): void {
    const bad = this.client.log.filter((result) => problemOf(result) !== undefined);
    const first = bad[0];
    this.checks.judge(
      id,
      () => (first === undefined ? ok() : problem(`${describe(first)}: ${problemOf(first)}${bad.length > 1 ? ` (and ${bad.length - 1} more)` : ""}`)),
      bad.map((result) => result.exchange),
    );
  }

  /** An instance the run made (or may have made: no answer), to deprovision at the end unless the run does. */
  private madeInstance(id: string, serviceId: string, planId: string): void {
    this.made.set(id, { serviceId, planId });
    const current = () => this.made.get(id) as Made;
    this.ledger.add(id, {
      what: { instance: id },
      // Its plan when the call is shown: an update may change it.
      get call() {
        return `DELETE /v2/service_instances/${id}?${idsQuery(current().serviceId, current().planId).slice(1)}`;
      },
      remove: () => this.deprovisionAtCleanup(id, current()),
    });
  }

  /** Deprovisions an instance at cleanup, following a 202 to its end (200 or 410: removed); undefined once it is gone, else why not. */
  private async deprovisionAtCleanup(id: string, { serviceId, planId }: Made): Promise<string | undefined> {
    this.options.onProgress?.({ type: "destroying", instance: id });
    const path = `/v2/service_instances/${id}`;
    const result = await this.client.send({ method: "DELETE", path: `${path}?accepts_incomplete=true${idsQuery(serviceId, planId)}` });
    let reason: string | undefined;
    if (result.answer?.status === 202) {
      const end = await this.poll(`${path}/last_operation${pollQuery(serviceId, planId, operationOf(result) ?? undefined)}`, id).catch(() => undefined);
      if (end?.state !== "gone" && end?.state !== "succeeded") reason = end ? `202, then last_operation ${pollEndText(end, this.timeoutMs)}` : "interrupted";
    } else if (result.answer?.status !== 200 && result.answer?.status !== 410) {
      reason = `${describe(result)} answered ${statusOf(result)}`;
    }
    this.options.onProgress?.({ type: "cleanup", instance: id, removed: reason === undefined, ...(reason ? { reason } : {}) });
    return reason;
  }

  private async send(call: BrokerCall): Promise<BrokerResult> {
    this.interruptIfAsked();
    return this.client.send(call);
  }

  private interruptIfAsked(): void {
    if (this.options.signal?.aborted) throw new Interrupted();
  }
}


function provisionBody(serviceId: string, planId: string): Record<string, unknown> {
  return {
    service_id: serviceId,
    plan_id: planId,
    organization_guid: "pkc-org",
    space_guid: "pkc-space",
    context: { platform: "tsuru", instance_name: "pkc-osb-conformance" },
  };
}

function idsQuery(serviceId: string, planId: string): string {
  return `&service_id=${encodeURIComponent(serviceId)}&plan_id=${encodeURIComponent(planId)}`;
}

function pollQuery(serviceId: string, planId: string, operation: string | undefined): string {
  const query = new URLSearchParams({ service_id: serviceId, plan_id: planId });
  if (operation !== undefined) query.set("operation", operation);
  return `?${query.toString()}`;
}

function describe(result: BrokerResult): string {
  return `${result.exchange.method} ${result.exchange.path.split("?")[0]}`;
}

function statusOf(result: BrokerResult): string {
  return result.answer ? String(result.answer.status) : `nothing (${result.exchange.error ?? "no answer"})`;
}

function isSuccess(result: BrokerResult): boolean {
  const status = result.answer?.status ?? 0;
  return status >= 200 && status < 300;
}

function expect(result: BrokerResult, statuses: number[], expected: string): Verdict {
  return result.answer && statuses.includes(result.answer.status) ? ok() : problem(`${describe(result)} answered ${statusOf(result)}, not ${expected}`);
}

function errorCode(result: BrokerResult): unknown {
  return (result.answer?.json as { error?: unknown } | undefined)?.error;
}

/** The `operation` of a 202: undefined when absent, null when it is not a string. */
function operationOf(result: BrokerResult): string | undefined | null {
  const operation = (result.answer?.json as { operation?: unknown } | undefined)?.operation;
  if (operation === undefined) return undefined;
  return typeof operation === "string" ? operation : null;
}

function pollEndText(end: PollEnd, timeoutMs: number): string {
  const last = end.polls.at(-1);
  switch (end.state) {
    case "timeout":
      return `was still "in progress" after ${Math.round(timeoutMs / 1000)} s`;
    case "failed":
      return `answered state "failed"${descriptionOf(last)}`;
    case "gone":
      return "answered 410 Gone";
    case "succeeded":
      return 'answered "succeeded"';
    case "error":
      return last ? `answered ${statusOf(last)} ${last.exchange.response?.body ?? ""}`.trim() : "was not polled";
  }
}

function descriptionOf(result: BrokerResult | undefined): string {
  const description = (result?.answer?.json as { description?: unknown } | undefined)?.description;
  return typeof description === "string" ? `: ${description}` : "";
}

function catalogStatus(result: BrokerResult): Verdict {
  if (result.answer?.status !== 200) return problem(`GET /v2/catalog answered ${statusOf(result)}, not 200`);
  const services = (result.answer.json as { services?: unknown } | undefined)?.services;
  return Array.isArray(services) ? ok() : problem("GET /v2/catalog answered 200 without a JSON object holding a `services` array");
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

function catalogShape(services: unknown[]): Verdict {
  const problems: string[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  const useId = (id: unknown, what: string) => {
    if (!nonEmpty(id)) return problems.push(`${what} has no non-empty string id`);
    if (ids.has(id)) problems.push(`the id "${id}" of ${what} is used twice`);
    ids.add(id);
  };
  if (services.length === 0) problems.push("the catalog lists no service offering");
  for (const [index, raw] of services.entries()) {
    const service = (raw ?? {}) as Record<string, unknown>;
    const what = `offering ${nonEmpty(service.name) ? `"${service.name}"` : `#${index + 1}`}`;
    if (!nonEmpty(service.name)) problems.push(`${what} has no non-empty name`);
    else if (names.has(service.name)) problems.push(`the offering name "${service.name}" is used twice`);
    else names.add(service.name);
    useId(service.id, what);
    if (!nonEmpty(service.description)) problems.push(`${what} has no non-empty description`);
    if (typeof service.bindable !== "boolean") problems.push(`${what} has no boolean \`bindable\``);
    const plans = service.plans;
    if (!Array.isArray(plans) || plans.length === 0) {
      problems.push(`${what} has no plan`);
      continue;
    }
    const planNames = new Set<string>();
    for (const [planIndex, rawPlan] of plans.entries()) {
      const plan = (rawPlan ?? {}) as Record<string, unknown>;
      const planWhat = `plan ${nonEmpty(plan.name) ? `"${plan.name}"` : `#${planIndex + 1}`} of ${what}`;
      if (!nonEmpty(plan.name)) problems.push(`${planWhat} has no non-empty name`);
      else if (planNames.has(plan.name)) problems.push(`the plan name "${plan.name}" is used twice in ${what}`);
      else planNames.add(plan.name);
      useId(plan.id, planWhat);
      if (!nonEmpty(plan.description)) problems.push(`${planWhat} has no non-empty description`);
    }
  }
  return problems.length > 0 ? problem(problems.slice(0, 3).join("; ") + (problems.length > 3 ? ` (and ${problems.length - 3} more)` : "")) : ok();
}

/** Offering and plan ids by name: `service` and `service/plan`. */
function idsByName(result: BrokerResult): Map<string, unknown> {
  const ids = new Map<string, unknown>();
  const services = (result.answer?.json as { services?: unknown } | undefined)?.services;
  for (const service of Array.isArray(services) ? (services as Array<Record<string, unknown>>) : []) {
    ids.set(String(service.name), service.id);
    for (const plan of Array.isArray(service.plans) ? (service.plans as Array<Record<string, unknown>>) : []) ids.set(`${String(service.name)}/${String(plan.name)}`, plan.id);
  }
  return ids;
}

function stableIds(first: BrokerResult, second: BrokerResult): Verdict {
  if (second.answer?.status !== 200) return problem(`the second GET /v2/catalog answered ${statusOf(second)}`);
  const before = idsByName(first);
  const after = idsByName(second);
  const changed = [...before].filter(([name, id]) => after.has(name) && after.get(name) !== id).map(([name, id]) => `"${name}" had id ${JSON.stringify(id)}, then ${JSON.stringify(after.get(name))}`);
  return changed.length > 0 ? problem(changed.join("; ")) : ok();
}

function bindingVerdict(created: BrokerResult, withCredentials: BrokerResult): Verdict {
  if (created.answer?.status !== 201 && created.answer?.status !== 202) return problem(`${describe(created)} answered ${statusOf(created)}, not 201 (or 202)`);
  const credentials = (withCredentials.answer?.json as { credentials?: unknown } | undefined)?.credentials;
  if (credentials === null || typeof credentials !== "object" || Array.isArray(credentials)) {
    return problem(`${describe(withCredentials)} answered ${statusOf(withCredentials)} without \`credentials\` as an object`);
  }
  return ok();
}

function parametersVerdict(patched: Patched, before: Plan | undefined, seen: { result: BrokerResult; planId?: string } | undefined, offering: Offering, timeoutMs: number): Verdict {
  const status = patched.result.answer?.status;
  if (status === 400 || status === 422) return ok(`refused the parameters with ${status}`);
  if (patched.end?.state === "failed") return ok("the update ended \"failed\"");
  if (!patched.applied) {
    return problem(`${describe(patched.result)} answered ${statusOf(patched.result)}${patched.end ? `, then last_operation ${pollEndText(patched.end, timeoutMs)}` : ""}, not 200 (or 202), 400 or 422`);
  }
  if (seen?.planId === undefined) return ok(offering.instancesRetrievable ? "the instance's GET showed no plan_id" : "applied (the offering is not instances_retrievable: its plan was not read back)");
  if (before !== undefined && seen.planId !== before.id) {
    const now = offering.plans.find((plan) => plan.id === seen.planId);
    return problem(`an update with parameters and no plan_id moved the instance from plan "${before.name}" to ${now ? `"${now.name}"` : JSON.stringify(seen.planId)}`);
  }
  return ok();
}

function planChangeVerdict(patched: Patched, from: Plan, to: Plan, seen: { result: BrokerResult; planId?: string } | undefined, timeoutMs: number): Verdict {
  const status = patched.result.answer?.status;
  if (status === 422) return ok(`refused the change from "${from.name}" to "${to.name}" with 422`);
  if (!patched.applied) {
    return problem(`${describe(patched.result)} changing plan "${from.name}" to "${to.name}" answered ${statusOf(patched.result)}${patched.end ? `, then last_operation ${pollEndText(patched.end, timeoutMs)}` : ""}, not 200 (or 202, then succeeded) or 422`);
  }
  if (seen === undefined) return ok("applied (the offering is not instances_retrievable: its plan was not read back)");
  if (seen.planId === undefined) return ok(`applied; ${describe(seen.result)} answered ${statusOf(seen.result)} without a plan_id`);
  if (seen.planId !== to.id) return problem(`${describe(patched.result)} answered ${statusOf(patched.result)} to a change from "${from.name}" to "${to.name}", yet the instance is on plan ${JSON.stringify(seen.planId)}`);
  return ok();
}

function deprovisionVerdict(result: BrokerResult): Verdict {
  const status = result.answer?.status;
  if (status === 200) return ok("removed at once");
  if (status === 202) return operationOf(result) === null ? problem(`${describe(result)} answered 202 with an \`operation\` that is not a string`) : ok();
  return problem(`${describe(result)} answered ${statusOf(result)}, not 200 or 202`);
}

function pollProblem(poll: BrokerResult): string | undefined {
  if (poll.answer?.status !== 200) return `${describe(poll)} answered ${statusOf(poll)} while the operation ran, not 200`;
  const body = (poll.answer.json ?? {}) as { state?: unknown; description?: unknown };
  if (typeof body.state !== "string" || !STATES.includes(body.state)) return `${describe(poll)} answered state ${JSON.stringify(body.state)}, not one of ${STATES.map((s) => `"${s}"`).join(", ")}`;
  if (body.description !== undefined && !nonEmpty(body.description)) return `${describe(poll)} answered a \`description\` that is not a non-empty string`;
  return undefined;
}
