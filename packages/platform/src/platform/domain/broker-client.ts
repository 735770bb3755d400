/**
 * The platform's client of an Open Service Broker, as the real platform's (service/broker.go,
 * `brokerClient`, which implements the same client interface as a native provider's endpoint):
 * each call the platform makes to a provider is made as the OSB call that stands for it. The
 * instance's and bindings' ids at the broker are kept in `brokerInstances` (its BrokerInstanceData).
 */
import { createHash, randomUUID } from "node:crypto";
import { redactSecrets, secretForms, type Call, type CallResult, type SecretForm } from "provider-kit/contract";
import type { PlatformStore } from "../store/store.js";
import type { Broker, BrokerInstance, BrokerService } from "./model.js";

/** The OSB version the platform speaks. */
const OSB_API_VERSION = "2.17";

export interface OsbRequest {
  method: "GET" | "PUT" | "PATCH" | "DELETE";
  /** Below the broker's URL, from `/v2`. */
  path: string;
  body?: unknown;
  /** Sent in X-Broker-API-Originating-Identity. */
  user?: string;
  /** The answer holds credentials: the timeline keeps their shape only. */
  secretAnswer?: boolean;
}

export interface BrokerCallDeps {
  store: PlatformStore;
  user: string | undefined;
  /** Sends one OSB request (and keeps it in the timeline). */
  send: (request: OsbRequest) => Promise<CallResult>;
}

/** The native call `call` made through the broker; answers as a native provider would (the callers word the failures). */
export async function brokerCall(service: BrokerService, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const route = /^\/resources(?:\/([^/?]+))?(\/[^?]*)?$/.exec(call.path);
  const instance = route?.[1] === undefined ? undefined : decodeURIComponent(route[1]);
  const rest = route?.[2] ?? "";
  const fields = call.payload?.fields ?? {};
  const field = (name: string) => (typeof fields[name] === "string" ? fields[name] : undefined);
  if (call.method === "GET" && instance === "plans" && rest === "") {
    return answer(call, 200, JSON.stringify(service.plans.map(({ name, description }) => ({ name, description }))));
  }
  if (call.method === "POST" && instance === undefined) return provision(service, field("name") ?? "", field("plan"), call, deps);
  if (instance === undefined) return unsupported(call);
  const data = await deps.store.get("brokerInstances", instance);
  // No broker instance: a native provider's 404.
  if (!data) return answer(call, 404, `Instance "${instance}" not found.`);
  const route2 = `${call.method} ${rest}`;
  switch (route2) {
    case "GET /status":
      return lastOperation(data, call, deps);
    case "GET ":
      // The broker client's Info lists the instance's parameters; the broker has no extra info to give.
      return answer(call, 404, "");
    case "PUT ":
      return update(service, data, field("plan"), call, deps);
    case "DELETE ":
      return deprovision(data, call, deps);
    case "POST /bind-app":
      return bind(service, data, field("app-name") ?? "", call, deps);
    case "DELETE /bind-app":
      return unbind(data, field("app-name") ?? "", call, deps);
    default:
      return unsupported(call);
  }
}

/** `Create`: a new instance id, `accepts_incomplete=true`; the operation of a 202 is kept for the polls. */
async function provision(service: BrokerService, name: string, planName: string | undefined, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const plan = service.plans.find((candidate) => candidate.name === planName);
  // getPlan's words.
  if (!plan) return answer(call, 400, `invalid plan: ${planName ?? ""}`);
  const uuid = randomUUID();
  const org = randomUUID();
  const result = await deps.send({
    method: "PUT",
    path: `/v2/service_instances/${uuid}?accepts_incomplete=true`,
    user: deps.user,
    body: {
      service_id: service.serviceId,
      plan_id: plan.id,
      organization_guid: org,
      space_guid: org,
      ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
      context: { platform: "tsuru", organization_guid: org, space_guid: org, instance_name: name, ...service.broker.config.context },
    },
  });
  if (!oneOf(result, 200, 201, 202)) return result;
  await deps.store.put("brokerInstances", name, { instance: name, uuid, serviceId: service.serviceId, planId: plan.id, binds: {}, ...operationOf(result) });
  return answer(call, 201, "");
}

/** `Status`: the last operation's state, and its description after " - ". */
async function lastOperation(data: BrokerInstance, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const query = new URLSearchParams({ service_id: data.serviceId, plan_id: data.planId, ...(data.lastOperation ? { operation: data.lastOperation } : {}) });
  const result = await deps.send({ method: "GET", path: `/v2/service_instances/${data.uuid}/last_operation?${query.toString()}`, user: deps.user });
  if (!oneOf(result, 200)) return result;
  const { state, description } = jsonOf(result) as { state?: unknown; description?: unknown };
  return answer(call, 200, `${String(state)}${typeof description === "string" && description !== "" ? ` - ${description}` : ""}`);
}

/** `Update`: the plan changed with PATCH, the previous one in `previous_values`. */
async function update(service: BrokerService, data: BrokerInstance, planName: string | undefined, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const plan = planName ? service.plans.find((candidate) => candidate.name === planName) : undefined;
  if (planName && !plan) return answer(call, 400, `invalid plan: ${planName}`);
  const result = await deps.send({
    method: "PATCH",
    path: `/v2/service_instances/${data.uuid}?accepts_incomplete=true`,
    user: deps.user,
    body: {
      service_id: data.serviceId,
      plan_id: plan?.id ?? data.planId,
      ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
      previous_values: { service_id: data.serviceId, plan_id: data.planId },
      context: { platform: "tsuru", instance_name: data.instance, ...service.broker.config.context },
    },
  });
  if (!oneOf(result, 200, 202)) return result;
  await deps.store.put("brokerInstances", data.instance, { ...data, planId: plan?.id ?? data.planId, ...operationOf(result) });
  return answer(call, 200, "");
}

/** `Destroy`: the broker may finish in the background; the platform forgets the instance at once, as the real one does. */
async function deprovision(data: BrokerInstance, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const query = new URLSearchParams({ accepts_incomplete: "true", service_id: data.serviceId, plan_id: data.planId });
  const result = await deps.send({ method: "DELETE", path: `/v2/service_instances/${data.uuid}?${query.toString()}`, user: deps.user });
  // 410: the broker has no such instance any more, which is what was asked.
  if (!oneOf(result, 200, 202, 410)) return result;
  await deps.store.delete("brokerInstances", data.instance);
  return answer(call, 200, "");
}

/**
 * `BindApp`: a new binding id for the app (its GUID stable per app name); the credentials'
 * string values become the app's variables, as the real platform keeps them (it drops the rest).
 */
async function bind(service: BrokerService, data: BrokerInstance, app: string, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const bindingId = randomUUID();
  const appGuid = appGuidOf(app);
  const result = await deps.send({
    method: "PUT",
    path: `/v2/service_instances/${data.uuid}/service_bindings/${bindingId}?accepts_incomplete=true`,
    user: deps.user,
    secretAnswer: true,
    body: {
      service_id: data.serviceId,
      plan_id: data.planId,
      app_guid: appGuid,
      bind_resource: { app_guid: appGuid },
      ...(call.payload?.parameters ? { parameters: call.payload.parameters } : {}),
      context: { platform: "tsuru", app_name: app, ...service.broker.config.context },
    },
  });
  if (!oneOf(result, 200, 201, 202)) return result;
  const credentials = (jsonOf(result) as { credentials?: unknown } | undefined)?.credentials;
  const envs = Object.fromEntries(
    Object.entries(credentials !== null && typeof credentials === "object" ? credentials : {}).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
  );
  await deps.store.put("brokerInstances", data.instance, { ...data, binds: { ...data.binds, [app]: bindingId }, ...operationOf(result) });
  return answer(call, 201, JSON.stringify(envs));
}

/** `UnbindApp`: the app's binding deleted; 410 (already gone) is what was asked. */
async function unbind(data: BrokerInstance, app: string, call: Call, deps: BrokerCallDeps): Promise<CallResult> {
  const bindingId = data.binds[app];
  if (bindingId === undefined) return answer(call, 404, `The app "${app}" has no binding at the broker.`);
  const query = new URLSearchParams({ accepts_incomplete: "true", service_id: data.serviceId, plan_id: data.planId });
  const result = await deps.send({ method: "DELETE", path: `/v2/service_instances/${data.uuid}/service_bindings/${bindingId}?${query.toString()}`, user: deps.user });
  if (!oneOf(result, 200, 202, 410)) return result;
  const { [app]: _gone, ...binds } = data.binds;
  await deps.store.put("brokerInstances", data.instance, { ...data, binds });
  return answer(call, 200, "");
}

/** A call OSB has no equivalent for (unit and job binds): it fails without reaching the broker. */
function unsupported(call: Call): CallResult {
  const error = `${call.method} ${call.path.split("?")[0]} has no Open Service Broker equivalent: a broker's services are bound to apps only`;
  return { exchange: { method: call.method, path: call.path, requestHeaders: {}, requestBody: "", error }, durationMs: 0, curl: "", error, secrets: [] };
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

function oneOf(result: CallResult, ...statuses: number[]): boolean {
  return result.answer !== undefined && statuses.includes(result.answer.status);
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

/** Sends one OSB request to the broker: its version header, its auth, JSON. Never throws for HTTP or network failures. */
export async function sendOsb(broker: Broker, request: OsbRequest, timeoutMs: number): Promise<{ result: CallResult; url: string }> {
  const base = broker.url.replace(/\/+$/, "");
  const headers: Record<string, string> = { "X-Broker-API-Version": OSB_API_VERSION };
  const auth = broker.config.authConfig;
  const secrets: SecretForm[] = [];
  if (auth?.basicAuthConfig) {
    const { username, password } = auth.basicAuthConfig;
    headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    secrets.push(...secretForms(username, password));
  } else if (auth?.bearerConfig) {
    headers.Authorization = `Bearer ${auth.bearerConfig.token}`;
    secrets.push({ what: "the bearer token", text: auth.bearerConfig.token });
  }
  if (request.user) headers["X-Broker-API-Originating-Identity"] = `tsuru ${Buffer.from(JSON.stringify({ user: request.user })).toString("base64")}`;
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const shownHeaders = { ...headers, ...(headers.Authorization ? { Authorization: `${headers.Authorization.split(" ")[0]} <redacted>` } : {}) };
  const curl = [
    `curl -X ${request.method} '${base}${request.path}'`,
    ...Object.entries(shownHeaders).map(([name, value]) => `-H '${name}: ${value}'`),
    ...(body === undefined ? [] : [`-d '${body.replaceAll("'", `'\\''`)}'`]),
  ].join(" ");
  const exchange: CallResult["exchange"] = { method: request.method, path: request.path, requestHeaders: shownHeaders, requestBody: body ?? "" };
  const started = performance.now();
  try {
    const response = await fetch(`${base}${request.path}`, { method: request.method, headers, body, redirect: "manual", signal: AbortSignal.timeout(Math.min(timeoutMs, 2 ** 31 - 1)) });
    const bytes = Buffer.from(await response.arrayBuffer());
    const text = redactSecrets(bytes.toString("utf8"), secrets);
    const contentType = response.headers.get("content-type") ?? "";
    exchange.response = { status: response.status, contentType, body: request.secretAnswer && response.status < 300 ? credentialShape(text) : text };
    return {
      result: { exchange, durationMs: performance.now() - started, curl, answer: { status: response.status, contentType, body: text, bytes }, secrets },
      url: base,
    };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    const reason = redactSecrets(cause?.code ?? (error as Error).message, secrets);
    exchange.error = reason;
    return { result: { exchange, durationMs: performance.now() - started, curl, error: reason, secrets }, url: base };
  }
}

/** A binding's answer with each credential replaced by its type: the timeline shows the shape, never the secret. */
function credentialShape(text: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `<not JSON, ${text.length} characters>`;
  }
  if (parsed === null || typeof parsed !== "object") return `<${typeof parsed}>`;
  const { credentials, ...rest } = parsed as Record<string, unknown>;
  if (credentials === null || typeof credentials !== "object") return JSON.stringify(rest);
  return JSON.stringify({ ...rest, credentials: Object.fromEntries(Object.keys(credentials).map((key) => [key, `<${typeof (credentials as Record<string, unknown>)[key]}>`])) });
}
