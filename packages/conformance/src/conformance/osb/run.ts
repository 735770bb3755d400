/**
 * `runOsbConformance`: plays a platform against an Open Service Broker (API v2.17) and reports
 * every check of `osb/checks.ts`, in the same report as the native run. Whatever happens, the
 * instances the run created are deprovisioned before it returns.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Recorder, ok, problem, should, skip, type Verdict } from "../recorder.js";
import { ConformanceUsageError } from "../run.js";
import { CredentialsRefusedError, Interrupted, ProviderUnreachableError } from "../scenario.js";
import type { ConformanceReport, Leftover, OsbCheckGroup, ProgressEvent } from "../types.js";
import { OSB_CHECKS } from "./checks.js";
import { BrokerClient, type BrokerCall, type BrokerResult } from "./client.js";

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

interface Offering {
  id: string;
  bindable: boolean;
  plans: Array<{ id: string; name: string }>;
}

/** An instance the run made, with what its deprovision must name. */
interface Made {
  serviceId: string;
  planId: string;
}

/** How a poll of last_operation ended: its last answer's state, or the status that stopped it. */
interface PollEnd {
  state: "succeeded" | "failed" | "gone" | "timeout" | "error";
  polls: BrokerResult[];
}

const STATES = ["in progress", "succeeded", "failed"];
const APP = "pkc-app";

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
    await run.removeInstances();
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
    leftovers: run.leftovers,
    interrupted,
    durationMs: Date.now() - started,
  };
}

class OsbRun {
  readonly instanceId = randomUUID();
  readonly leftovers: Leftover[] = [];
  private readonly made = new Map<string, Made>();
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
    if (offering) {
      await this.malformedProvision(offering);
      const asyncPlans = await this.syncProvisions(offering);
      const plan = offering.plans.find((candidate) => asyncPlans.has(candidate.id)) ?? offering.plans[0];
      if (plan && (await this.provision(offering, plan.id))) {
        await this.rerequests(offering, plan.id);
        await this.binding(offering, plan.id);
        await this.deprovision(offering, plan.id);
      }
    }
    this.checks.judge("osb-last-operation.states", () => this.statesVerdict(), this.polls.map((poll) => poll.exchange));
    this.checks.judge("osb-errors.body", () => this.errorBodiesVerdict(), this.badErrorBodies().map((result) => result.exchange));
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
        plans: (service.plans as Array<Record<string, unknown>>).map((plan) => ({ id: plan.id as string, name: plan.name as string })),
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
      () => (old.answer?.status === 412 ? ok() : should(`${describe(old)} answered ${statusOf(old)}: a platform speaking API 1.0 is not told the broker cannot serve it`)),
      [old.exchange],
    );
  }

  private async deprovisionUnknown(offering: Offering | undefined): Promise<void> {
    const query = offering ? idsQuery(offering.id, offering.plans[0]?.id ?? "") : "";
    const gone = await this.send({ method: "DELETE", path: `/v2/service_instances/${randomUUID()}?accepts_incomplete=true${query}` });
    this.checks.judge("osb-deprovision.gone", () => expect(gone, [410], "410 Gone"), [gone.exchange]);
  }

  private async malformedProvision(offering: Offering): Promise<void> {
    const id = randomUUID();
    const malformed = await this.send({ method: "PUT", path: `/v2/service_instances/${id}?accepts_incomplete=true`, body: { organization_guid: "pkc-org", space_guid: "pkc-space" } });
    if (isSuccess(malformed)) this.made.set(id, { serviceId: offering.id, planId: offering.plans[0]?.id ?? "" });
    this.checks.judge("osb-provision.malformed", () => expect(malformed, [400], "400 Bad Request"), [malformed.exchange]);
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
      if (isSuccess(result) || !result.answer) this.made.set(id, { serviceId: offering.id, planId: plan.id });
      const status = result.answer?.status;
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
    if (isSuccess(result) || !result.answer) this.made.set(this.instanceId, { serviceId: offering.id, planId });
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
    const otherPlan = offering.plans.find((plan) => plan.id !== planId);
    const different = otherPlan
      ? provisionBody(offering.id, otherPlan.id)
      : { ...provisionBody(offering.id, planId), parameters: { "pkc-conflict": randomUUID() } };
    const conflict = await this.send({ method: "PUT", path, body: different });
    this.checks.judge("osb-provision.conflict", () => expect(conflict, [409], "409 Conflict"), [conflict.exchange]);
  }

  private async binding(offering: Offering, planId: string): Promise<void> {
    if (!offering.bindable) {
      this.checks.skipAll(BINDING_CHECKS, "the offering is not bindable: nothing to bind");
      return;
    }
    const path = `/v2/service_instances/${this.instanceId}/service_bindings/${randomUUID()}`;
    const body = (app: string, parameters?: Record<string, string>) => ({
      service_id: offering.id,
      plan_id: planId,
      app_guid: app,
      bind_resource: { app_guid: app },
      ...(parameters ? { parameters } : {}),
    });
    const created = await this.send({ method: "PUT", path: `${path}?accepts_incomplete=true`, body: body(APP), secretAnswer: true });
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
    // Another app and other parameters: a conflict whichever the broker compares.
    const conflict = await this.send({ method: "PUT", path: `${path}?accepts_incomplete=true`, body: body(`${APP}-other`, { "pkc-conflict": randomUUID() }), secretAnswer: true });
    this.checks.judge("osb-binding.conflict", () => expect(conflict, [409], "409 Conflict"), [conflict.exchange]);

    const unbindPath = `${path}?accepts_incomplete=true${idsQuery(offering.id, planId)}`;
    const unbound = await this.send({ method: "DELETE", path: unbindPath });
    let unbindVerdict = expect(unbound, [200, 202], "200 (or 202)");
    if (unbound.answer?.status === 202) {
      const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operationOf(unbound) ?? undefined)}`, this.instanceId);
      if (end.state !== "succeeded" && end.state !== "gone") unbindVerdict = problem(`202, then the binding's last_operation ${pollEndText(end, this.timeoutMs)}`);
    }
    this.checks.judge("osb-binding.unbind", () => unbindVerdict, [unbound.exchange]);
    if (!this.checks.passed("osb-binding.unbind")) return;
    const gone = await this.send({ method: "DELETE", path: unbindPath });
    this.checks.judge("osb-binding.unbind-gone", () => expect(gone, [410], "410 Gone"), [gone.exchange]);
  }

  private async deprovision(offering: Offering, planId: string): Promise<void> {
    const path = `/v2/service_instances/${this.instanceId}`;
    const result = await this.send({ method: "DELETE", path: `${path}?accepts_incomplete=true${idsQuery(offering.id, planId)}` });
    this.checks.judge("osb-deprovision.status", () => deprovisionVerdict(result), [result.exchange]);
    if (result.answer?.status === 200) {
      this.made.delete(this.instanceId);
      this.checks.judge("osb-last-operation.gone", () => skip("the deprovision finished at once (200): nothing to poll"));
      return;
    }
    if (!this.checks.passed("osb-deprovision.status")) return;
    const end = await this.poll(`${path}/last_operation${pollQuery(offering.id, planId, operationOf(result) ?? undefined)}`, this.instanceId);
    // The answer that ended the polling (410, or an error) is osb-last-operation.gone's to judge.
    this.polls.push(...(end.state === "gone" || end.state === "error" ? end.polls.slice(0, -1) : end.polls));
    if (end.state === "gone" || end.state === "succeeded") this.made.delete(this.instanceId);
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

  private badErrorBodies(): BrokerResult[] {
    return this.client.log.filter((result) => errorBodyProblem(result) !== undefined);
  }

  private errorBodiesVerdict(): Verdict {
    const bad = this.badErrorBodies();
    return bad.length === 0 ? ok() : problem(`${describe(bad[0] as BrokerResult)}: ${errorBodyProblem(bad[0] as BrokerResult)}${bad.length > 1 ? ` (and ${bad.length - 1} more)` : ""}`);
  }

  /** Deprovisions what the run made, following a 202 to its end: 200 or 410 means removed. */
  async removeInstances(): Promise<void> {
    for (const [id, { serviceId, planId }] of this.made) {
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
      if (reason) this.leftovers.push({ instance: id, reason });
    }
  }

  private async send(call: BrokerCall): Promise<BrokerResult> {
    this.interruptIfAsked();
    return this.client.send(call);
  }

  private interruptIfAsked(): void {
    if (this.options.signal?.aborted) throw new Interrupted();
  }
}

const BINDING_CHECKS = ["osb-binding.created", "osb-binding.identical", "osb-binding.conflict", "osb-binding.unbind", "osb-binding.unbind-gone"];

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

/** What is wrong with an error answer's body (401 aside: an auth layer answers it before the broker). */
function errorBodyProblem(result: BrokerResult): string | undefined {
  const status = result.answer?.status ?? 0;
  if (status < 400 || status === 401) return undefined;
  const json = result.answer?.json;
  if (json === null || typeof json !== "object" || Array.isArray(json)) return `answered ${status} with a body that is not a JSON object`;
  const { error, description } = json as { error?: unknown; description?: unknown };
  if (error !== undefined && !nonEmpty(error)) return `answered ${status} with an \`error\` that is not a non-empty string`;
  if (description !== undefined && !nonEmpty(description)) return `answered ${status} with a \`description\` that is not a non-empty string`;
  return undefined;
}
