/**
 * The platform's client of an Open Service Broker, as the real platform's (service/broker.go,
 * `brokerClient`, which implements the same client interface as a native provider's endpoint):
 * each call the platform makes to a provider is made as the OSB call that stands for it. The
 * instance's and bindings' ids at the broker are kept in `brokerInstances` (its BrokerInstanceData).
 * A failure is no native answer but the real platform's words for it (`brokerProblem`).
 */
import { createHash, randomUUID } from "node:crypto";
import type { Call, CallResult } from "provider-kit/contract";
import type { PlatformStore } from "../store/store.js";
import type { BrokerInstance, BrokerService } from "./model.js";
import { currentOperation } from "./operation.js";
import { osbFailure } from "./osb-failure.js";
import { type OsbRequest } from "./osb-send.js";
import { urlWithoutCredentials } from "provider-kit/contract";
import type { PlatformCallResult } from "./provider-answer.js";

export interface BrokerCallDeps {
  store: PlatformStore;
  user: string | undefined;
  /** Sends one OSB request (and keeps it in the timeline). */
  send: (request: OsbRequest) => Promise<CallResult>;
}

/** The native call `call` made through the broker; answers as a native provider would, or fails in the real platform's words. */
export async function brokerCall(service: BrokerService, call: Call, deps: BrokerCallDeps): Promise<PlatformCallResult> {
  const route = /^\/resources(?:\/([^/?]+))?(\/[^?]*)?$/.exec(call.path);
  const instance = route?.[1] === undefined ? undefined : decodeURIComponent(route[1]);
  const rest = route?.[2] ?? "";
  const fields = call.payload?.fields ?? {};
  const field = (name: string) => (typeof fields[name] === "string" ? fields[name] : undefined);
  if (call.method === "GET" && instance === "plans" && rest === "") {
    return answer(call, 200, JSON.stringify(service.plans.map(({ name, description }) => ({ name, description }))));
  }
  const osb = osbSender(service, deps);
  if (call.method === "POST" && instance === undefined) return provision(service, field("name") ?? "", field("plan"), call, deps, osb);
  if (instance === undefined) return unsupported(call);
  const data = await deps.store.get("brokerInstances", instance);
  // No broker instance: a native provider's 404.
  if (!data) return answer(call, 404, `Instance "${instance}" not found.`);
  const route2 = `${call.method} ${rest}`;
  switch (route2) {
    case "GET /status":
      return lastOperation(data, call, osb);
    case "GET ":
      // The broker client's Info lists the instance's parameters; the broker has no extra info to give.
      return answer(call, 404, "");
    case "PUT ":
      return update(service, data, field("plan"), call, deps, osb);
    case "DELETE ":
      return deprovision(data, call, deps, osb);
    case "POST /bind-app":
      return bind(service, data, field("app-name") ?? "", call, deps, osb);
    case "DELETE /bind-app":
      return unbind(data, field("app-name") ?? "", call, deps, osb);
    default:
      return unsupported(call);
  }
}

/** Sends one OSB request; an answer whose status is not among `ok` is a failure in the real platform's words. */
type OsbSender = (request: Omit<OsbRequest, "user">, ...ok: number[]) => Promise<{ result: CallResult; failure?: PlatformCallResult }>;

function osbSender(service: BrokerService, deps: BrokerCallDeps): OsbSender {
  return async (request, ...ok) => {
    const result = await deps.send({ ...request, user: deps.user });
    if (result.answer && ok.includes(result.answer.status)) return { result };
    return { result, failure: failed(result, osbFailure(result, urlWithoutCredentials(service.broker.url))) };
  };
}

/**
 * The `context` of a provision, update or bind, as brokerClient builds it: `request_id` and
 * `event_id` (one id here: the API request's, which is the platform's event), the org and space
 * on a provision, then the broker's own `Config.Context`, which wins.
 */
function contextOf(service: BrokerService, extra: Record<string, string> = {}): Record<string, unknown> {
  const id = currentOperation().operation?.id ?? randomUUID();
  return { request_id: id, event_id: id, ...extra, ...service.broker.config.context };
}

/** `Create`: a new instance id, `accepts_incomplete=true`; the operation of a 202 is kept for the polls. */
async function provision(service: BrokerService, name: string, planName: string | undefined, call: Call, deps: BrokerCallDeps, osb: OsbSender): Promise<PlatformCallResult> {
  const plan = service.plans.find((candidate) => candidate.name === planName);
  // getPlan's words, returned as they are (a plain error: 500).
  if (!plan) return refused(call, `invalid plan: ${planName ?? ""}`);
  const uuid = randomUUID();
  const org = randomUUID();
  const { result, failure } = await osb(
    {
      method: "PUT",
      path: `/v2/service_instances/${uuid}?accepts_incomplete=true`,
      body: {
        service_id: service.serviceId,
        plan_id: plan.id,
        organization_guid: org,
        space_guid: org,
        ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
        context: contextOf(service, { organization_guid: org, space_guid: org }),
      },
    },
    200,
    201,
    202,
  );
  if (failure) return failure;
  await deps.store.put("brokerInstances", name, { instance: name, uuid, serviceId: service.serviceId, planId: plan.id, binds: {}, ...operationOf(result) });
  return answer(call, 201, "");
}

/** `Status`: the last operation's state, and its description after " - "; any answer but 200 is an error. */
async function lastOperation(data: BrokerInstance, call: Call, osb: OsbSender): Promise<PlatformCallResult> {
  const query = new URLSearchParams({ service_id: data.serviceId, plan_id: data.planId, ...(data.lastOperation ? { operation: data.lastOperation } : {}) });
  const { result, failure } = await osb({ method: "GET", path: `/v2/service_instances/${data.uuid}/last_operation?${query.toString()}` }, 200);
  if (failure) return failure;
  const { state, description } = (jsonOf(result) ?? {}) as { state?: unknown; description?: unknown };
  return answer(call, 200, `${String(state)}${typeof description === "string" && description !== "" ? ` - ${description}` : ""}`);
}

/** `Update`: the plan changed with PATCH, the previous one in `previous_values`. */
async function update(service: BrokerService, data: BrokerInstance, planName: string | undefined, call: Call, deps: BrokerCallDeps, osb: OsbSender): Promise<PlatformCallResult> {
  const plan = planName ? service.plans.find((candidate) => candidate.name === planName) : undefined;
  if (planName && !plan) return refused(call, `invalid plan: ${planName}`);
  const { result, failure } = await osb(
    {
      method: "PATCH",
      path: `/v2/service_instances/${data.uuid}?accepts_incomplete=true`,
      body: {
        service_id: data.serviceId,
        plan_id: plan?.id ?? data.planId,
        ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
        previous_values: { service_id: data.serviceId, plan_id: data.planId },
        context: contextOf(service),
      },
    },
    200,
    202,
  );
  if (failure) return failure;
  await deps.store.put("brokerInstances", data.instance, { ...data, planId: plan?.id ?? data.planId, ...operationOf(result) });
  return answer(call, 200, "");
}

/** `Destroy`: the broker may finish in the background; the platform forgets the instance at once, as the real one does. */
async function deprovision(data: BrokerInstance, call: Call, deps: BrokerCallDeps, osb: OsbSender): Promise<PlatformCallResult> {
  const query = new URLSearchParams({ accepts_incomplete: "true", service_id: data.serviceId, plan_id: data.planId });
  // 410: the broker has no such instance any more, which is what was asked.
  const { failure } = await osb({ method: "DELETE", path: `/v2/service_instances/${data.uuid}?${query.toString()}` }, 200, 202, 410);
  if (failure) return failure;
  await deps.store.delete("brokerInstances", data.instance);
  return answer(call, 200, "");
}

/**
 * `BindApp`: a new binding id for the app (its GUID stable per app name); the credentials'
 * string values become the app's variables, as the real platform keeps them (it drops the rest).
 * Sent without `accepts_incomplete`, as the real platform's OSB client (alpha features off) sent
 * its binds: a broker that can only bind in the background refuses it (422).
 */
async function bind(service: BrokerService, data: BrokerInstance, app: string, call: Call, deps: BrokerCallDeps, osb: OsbSender): Promise<PlatformCallResult> {
  const bindingId = randomUUID();
  const appGuid = appGuidOf(app);
  const { result, failure } = await osb(
    {
      method: "PUT",
      path: `/v2/service_instances/${data.uuid}/service_bindings/${bindingId}`,
      secretAnswer: true,
      body: {
        service_id: data.serviceId,
        plan_id: data.planId,
        app_guid: appGuid,
        bind_resource: { app_guid: appGuid },
        ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
        context: contextOf(service),
      },
    },
    200,
    201,
  );
  if (failure) return failure;
  const parsed = jsonOf(result);
  // The OSB client's decoding error for a success that is not JSON.
  if (parsed === undefined) return failed(result, osbFailure(result, urlWithoutCredentials(service.broker.url)));
  const credentials = parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>).credentials : undefined;
  const envs = Object.fromEntries(
    Object.entries(credentials !== null && typeof credentials === "object" ? credentials : {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
  await deps.store.put("brokerInstances", data.instance, { ...data, binds: { ...data.binds, [app]: bindingId } });
  return answer(call, 201, JSON.stringify(envs));
}

/** `UnbindApp`: the app's binding deleted (without `accepts_incomplete`, as the bind); 410 (already gone) is what was asked. */
async function unbind(data: BrokerInstance, app: string, call: Call, deps: BrokerCallDeps, osb: OsbSender): Promise<PlatformCallResult> {
  const bindingId = data.binds[app];
  if (bindingId === undefined) return answer(call, 404, `The app "${app}" has no binding at the broker.`);
  const query = new URLSearchParams({ service_id: data.serviceId, plan_id: data.planId });
  const { failure } = await osb({ method: "DELETE", path: `/v2/service_instances/${data.uuid}/service_bindings/${bindingId}?${query.toString()}` }, 200, 410);
  if (failure) return failure;
  const { [app]: _gone, ...binds } = data.binds;
  await deps.store.put("brokerInstances", data.instance, { ...data, binds });
  return answer(call, 200, "");
}

/** A call OSB has no equivalent for (unit and job binds): it fails without reaching the broker. */
function unsupported(call: Call): CallResult {
  const error = `${call.method} ${call.path.split("?")[0]} has no Open Service Broker equivalent: a broker's services are bound to apps only`;
  return { exchange: { method: call.method, path: call.path, requestHeaders: {}, requestBody: "", error }, durationMs: 0, curl: "", error, secrets: [] };
}

/** A failure found before any OSB request (an unknown plan), in the real platform's words. */
function refused(call: Call, problem: string): PlatformCallResult {
  return { exchange: { method: call.method, path: call.path, requestHeaders: {}, requestBody: "", error: problem }, durationMs: 0, curl: "", error: problem, secrets: [], brokerProblem: problem };
}

/** The OSB call's result as a failure: no native answer, the real platform's words. */
function failed(result: CallResult, problem: string): PlatformCallResult {
  return { ...result, answer: undefined, error: problem, brokerProblem: problem };
}

/** The native answer the platform reads (never sent, never kept: the OSB calls are). */
function answer(call: Call, status: number, body: string): CallResult {
  const bytes = Buffer.from(body);
  return {
    exchange: { method: call.method, path: call.path, requestHeaders: {}, requestBody: "", response: { status, contentType: "application/json", body } },
    durationMs: 0,
    curl: "",
    answer: { status, contentType: "application/json", body, bytes },
    secrets: [],
  };
}

function jsonOf(result: CallResult): unknown {
  try {
    return JSON.parse(result.answer?.body ?? "") as unknown;
  } catch {
    return undefined;
  }
}

/** `{ lastOperation }` from a 202's `operation`, when it gave one. */
function operationOf(result: CallResult): Pick<BrokerInstance, "lastOperation"> {
  const operation = (jsonOf(result) as { operation?: unknown } | undefined)?.operation;
  return result.answer?.status === 202 && typeof operation === "string" ? { lastOperation: operation } : {};
}

/** The app's GUID for brokers (the real platform's App.EnsureUUID): a name-based UUID, the same on every bind of that app. */
function appGuidOf(app: string): string {
  const hash = createHash("sha1").update(`tsuru-app:${app}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
