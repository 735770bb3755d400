/**
 * What every OSB call shares: the version header, the originating identity, the query and the
 * body as OSB sends them, the ids in the path, the registry names of OSB instances and bindings,
 * and the handler context that carries `ctx.osb`. The calls themselves go through the native
 * endpoints' machinery (`mountCall`: timeout, context) and the same lifecycle.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import { sendJson } from "../http/answer.js";
import { PARAMETER_DEPTH_LIMIT } from "../http/fields.js";
import type { Call } from "../http/endpoint.js";
import type { RequestScope } from "../http/scope.js";
import type { RequestContext } from "../lifecycle/lifecycle.js";
import type { RegistryLifecycle } from "../lifecycle/registry.js";
import type { CallPlacement, Parameters, ProviderHandlers } from "../types.js";
import { badRequest, OsbError } from "./errors.js";
import type { ResolvedOsbOptions } from "./options.js";
import type { OriginatingIdentity, OsbCall } from "./types.js";

/**
 * Registry names of what OSB creates: `osb:<instance_id>`, and `osb:<binding_id>` for the app key
 * of a binding. Native instance and app names start with a letter and hold only letters, digits,
 * `-` and `_`, so a native name is never one of these.
 */
const OSB_PREFIX = "osb:";
export const registryName = (id: string) => `${OSB_PREFIX}${id}`;

/** An OSB answer: always JSON, `{}` at least. */
export interface OsbAnswer {
  status: number;
  body: Record<string, unknown>;
}

export const answer = (status: number, body: Record<string, unknown> = {}): OsbAnswer => ({ status, body });

export function sendAnswer(res: ServerResponse, result: OsbAnswer): void {
  sendJson(res, result.status, result.body);
}

/** What an OSB call needs besides the registry `mountCall` hands it. */
export interface OsbDeps {
  options: ResolvedOsbOptions;
  handlers: ProviderHandlers;
}

/** An OSB route's call: JSON answers, on the registry (OSB needs one), the rest as any route's. */
export type OsbCallDefinition<Req> = Call<Req, OsbAnswer, RegistryLifecycle>;

const VERSION_HEADER = "x-broker-api-version";
const IDENTITY_HEADER = "x-broker-api-originating-identity";
/** The oldest version whose calls this broker answers as they expect (originating identity, context, GET of instances). */
const OLDEST_VERSION = { major: 2, minor: 13 } as const;

/** 412 for a platform older than 2.13, or one that does not say its version. */
export function checkVersion(req: IncomingMessage): void {
  const sent = req.headers[VERSION_HEADER];
  const match = typeof sent === "string" ? /^(\d+)\.(\d+)$/.exec(sent.trim()) : null;
  const wanted = `${OLDEST_VERSION.major}.${OLDEST_VERSION.minor}`;
  if (match === null) {
    throw new OsbError(412, "PreconditionFailed", `Send the header X-Broker-API-Version (this broker speaks 2.${OLDEST_VERSION.minor} to 2.17 of the Open Service Broker API).`);
  }
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major !== OLDEST_VERSION.major || minor < OLDEST_VERSION.minor) {
    throw new OsbError(412, "PreconditionFailed", `X-Broker-API-Version ${match[0]} is not supported: this broker needs ${wanted} or later (2.x).`);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `<platform> <base64 of a JSON object>`; a malformed header is the platform's bug, answered 400. */
function originatingIdentity(req: IncomingMessage): OriginatingIdentity | undefined {
  const sent = req.headers[IDENTITY_HEADER];
  if (sent === undefined) return undefined;
  const match = typeof sent === "string" ? /^(\S+) +([A-Za-z0-9+/=_-]+)$/.exec(sent.trim()) : null;
  let value: unknown;
  try {
    value = match === null ? undefined : JSON.parse(Buffer.from(match[2]!, "base64").toString("utf8"));
  } catch {
    value = undefined;
  }
  if (match === null || !isObject(value)) {
    throw badRequest("X-Broker-API-Originating-Identity must be `<platform> <base64 of a JSON object>`.");
  }
  return { platform: match[1]!, value };
}

/** Who the identity names, for `ctx.user` and the log line: the platform's user id or name. */
function userOf(identity: OriginatingIdentity | undefined): string | undefined {
  if (identity === undefined) return undefined;
  for (const field of ["user_id", "username", "user", "email", "uid"]) {
    const value = identity.value[field];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

export function queryOf(req: IncomingMessage): URLSearchParams {
  const url = req.url ?? "";
  const start = url.indexOf("?");
  return new URLSearchParams(start === -1 ? "" : url.slice(start + 1));
}

/** The JSON object the request carries; `{}` without a body. */
export function bodyOf(scope: RequestScope): Record<string, unknown> {
  if (scope.body === undefined) return {};
  if (scope.encoding !== "json" || !isObject(scope.body)) throw badRequest("The request body must be a JSON object (Content-Type: application/json).");
  return scope.body;
}

/** Ids in paths: non-empty, of the characters OSB recommends (RFC 3986 unreserved), bounded. */
const ID = "[A-Za-z0-9._~-]{1,200}";
const ID_PATTERN = new RegExp(`^${ID}$`);
/** The registry names of OSB instances (and the app keys of OSB bindings): `osb:<id>`. */
export const OSB_NAME_PATTERN = new RegExp(`^${OSB_PREFIX}${ID}$`);

export function idOf(scope: RequestScope, param: "instance_id" | "binding_id"): string {
  const id = scope.params[param] ?? "";
  if (!ID_PATTERN.test(id)) throw badRequest(`${param} must be 1 to 200 letters, digits, "-", ".", "_" or "~" (a GUID, say).`);
  return id;
}

export function textField(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** Where a call's fields come from: its JSON body, or its query string (unbind, deprovision, polls, fetches). */
type Fields = Record<string, unknown> | URLSearchParams;

function fieldOf(fields: Fields, name: string): unknown {
  return fields instanceof URLSearchParams ? (fields.get(name) ?? undefined) : fields[name];
}

/**
 * A field the spec marks optional: absent, or "if present, MUST be a non-empty string" (OSB 2.17,
 * e.g. last_operation's `service_id`); 400 naming it otherwise.
 */
export function optionalText(fields: Fields, name: string): string | undefined {
  const value = fieldOf(fields, name);
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || value === "") throw badRequest(`${name} must be a non-empty string when it is sent.`);
  return value;
}

/** A field the spec marks REQUIRED (`*`): 400 "missing mandatory data", naming it, when absent or not a non-empty string. */
export function requiredText(fields: Fields, name: string): string {
  const value = optionalText(fields, name);
  if (value === undefined) throw badRequest(`${name} is missing: OSB 2.17 requires it on this call (a non-empty string).`);
  return value;
}

/** `service_id` must be this broker's service. */
export function checkServiceId(options: ResolvedOsbOptions, serviceId: string | undefined): void {
  if (serviceId !== undefined && serviceId !== options.serviceId) {
    throw badRequest(`service_id ${JSON.stringify(serviceId)} is not this broker's service ("${options.serviceId}").`);
  }
}

/** The plan name of a catalog plan id. */
export function planNamed(options: ResolvedOsbOptions, planId: string): string {
  const name = options.planNames.get(planId);
  if (name === undefined) throw badRequest(`plan_id ${JSON.stringify(planId)} is not a plan of this broker's catalog.`);
  return name;
}

/** The ids a fetch or poll may send ("if present"): this broker's service, a plan of its catalog. */
export function checkOptionalIds(options: ResolvedOsbOptions, fields: Fields): void {
  checkServiceId(options, optionalText(fields, "service_id"));
  const planId = optionalText(fields, "plan_id");
  if (planId !== undefined) planNamed(options, planId);
}

export function objectField(body: Record<string, unknown>, field: string): Record<string, unknown> {
  const value = body[field];
  if (value === undefined || value === null) return {};
  if (!isObject(value)) throw badRequest(`${field} must be a JSON object.`);
  return value;
}

/**
 * OSB parameters (any JSON) as the native contract hands them to handlers: text leaves, as a
 * form's `parameters.a.b=1` arrives. Lists of values stay lists; anything deeper in a list is its JSON text.
 */
export function nativeParameters(json: Record<string, unknown>, depth = 1): Parameters {
  if (depth > PARAMETER_DEPTH_LIMIT) throw tooDeep();
  const parameters: Parameters = {};
  for (const [key, value] of Object.entries(json)) {
    if (value === null || value === undefined) continue;
    if (isObject(value)) parameters[key] = nativeParameters(value, depth + 1);
    else if (Array.isArray(value)) parameters[key] = value.map((item: unknown) => (typeof item === "string" ? item : jsonText(item, depth + 1)));
    else parameters[key] = typeof value === "string" ? value : JSON.stringify(value);
  }
  return parameters;
}

/** As deep as a native call's parameters may be: every later stage walks the tree recursively. */
const tooDeep = () => badRequest(`parameters may be nested at most ${PARAMETER_DEPTH_LIMIT} levels deep.`);

/** A list item's JSON text, refused when it nests deeper than parameters may. */
function jsonText(item: unknown, depth: number): string {
  const deeper = (value: unknown, level: number): boolean =>
    level > PARAMETER_DEPTH_LIMIT || (typeof value === "object" && value !== null && Object.values(value).some((inner) => deeper(inner, level + 1)));
  if (deeper(item, depth)) throw tooDeep();
  return JSON.stringify(item);
}

/** The parts of `ctx.osb` every call reads the same way. */
export function osbCallOf(req: IncomingMessage, scope: RequestScope, instanceId: string, context: Record<string, unknown>): OsbCall {
  const identity = originatingIdentity(req);
  scope.user = userOf(identity);
  scope.instance = registryName(instanceId);
  const instanceName = textField(context.instance_name) ?? textField(context.name);
  return {
    instanceId,
    ...(instanceName === undefined ? {} : { instanceName }),
    context,
    ...(identity === undefined ? {} : { originatingIdentity: identity }),
    acceptsIncomplete: queryOf(req).get("accepts_incomplete") === "true",
  };
}

/** The call's context with `osb` on it: what the registry hands the handlers as `ctx.osb`. */
class OsbRequestContext implements RequestContext {
  constructor(
    private readonly call: RequestContext,
    readonly osb: OsbCall,
  ) {}

  get requestId(): string {
    return this.call.requestId;
  }

  get user(): string | undefined {
    return this.call.user;
  }

  get eventId(): string | undefined {
    return this.call.eventId;
  }

  get signal(): AbortSignal {
    return this.call.signal;
  }

  get log(): Logger {
    return this.call.log;
  }

  get placement(): CallPlacement {
    return this.call.placement;
  }

  get deadline(): number {
    return this.call.deadline;
  }

  throwIfAborted(): void {
    this.call.throwIfAborted();
  }

  claimAnswer(): boolean {
    return this.call.claimAnswer();
  }

  waitingForLock(instance: string | undefined): void {
    this.call.waitingForLock(instance);
  }
}

export function withOsb(context: RequestContext, osb: OsbCall): RequestContext {
  return new OsbRequestContext(context, osb);
}
