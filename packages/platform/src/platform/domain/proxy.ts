/**
 * The platform's proxy (tsuru's api/service_instance.go and api/service.go): a user's own call
 * forwarded to the provider with the service's Basic credentials in place of the user's, through
 * the shared provider client, so it is in the call timeline like every other call. Who may call:
 * - below an instance: the users with access to it, or, under an enabled manifest, the holders
 *   of the matched action's permission (authorizeInstanceCall);
 * - anywhere on the provider (the service proxy): the service's owner teams;
 * - `/authenticated-resources/...`: any logged-in user.
 */
import type { ProxiedMethod } from "provider-kit/contract";
import { actionPermission, matchOperation } from "./action-manifest.js";
import { sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, forbidden, notFound, PlatformError, tooManyRequests } from "./errors.js";
import { assertInstanceAccess, findInstance } from "./instances.js";
import type { Instance, Service } from "./model.js";
import type { CallTarget } from "./provider-calls.js";
import { holdsAction } from "./service-actions.js";
import { findService } from "./services.js";

export interface ProxiedRequest {
  method: ProxiedMethod;
  /** The path's segments, decoded: below the instance, below `/authenticated-resources`, or from the provider's root. */
  segments: string[];
  /** The caller's query string, without `callback` ("" for none). */
  query: string;
  /** The caller's bytes, as they came. */
  body?: { contentType?: string; body: Buffer };
  /** Aborted when the caller goes: the provider call is then abandoned. */
  signal?: AbortSignal;
}

export interface ProxiedAnswer {
  status: number;
  contentType: string;
  contentEncoding?: string;
  body: Buffer;
}

/** Below an instance, only GET may reach these (service/endpoint.go's reserved proxy paths). */
const READ_ONLY_SUBPATHS = ["", "bind-app", "bind-job", "bind"];

/**
 * A path segment as a provider's router may match it: without its `;parameters` (Go's and
 * Java's routers drop them), spaces and case ignored. The segments come here decoded already.
 */
const routedSegment = (segment: string) => segment.split(";", 1)[0]!.trim().toLowerCase();

/**
 * Decoded path segments, empty ones dropped as the platform's path cleaning drops them; `.` and
 * `..` refused, so a call cannot climb out of where its route puts it.
 */
export function cleanSegments(segments: readonly string[]): string[] {
  if (segments.some((segment) => segment === "." || segment === "..")) {
    throw badRequest(`The proxied path "/${segments.join("/").slice(0, 200)}" has a "." or ".." segment: give the path itself.`);
  }
  return segments.filter((segment) => segment !== "");
}

const providerPath = (segments: readonly string[]) => segments.map(encodeURIComponent).join("/");

export async function proxyInstanceCall(context: Context, actor: Actor, serviceName: string, instanceName: string, request: ProxiedRequest): Promise<ProxiedAnswer> {
  const service = await findService(context, serviceName);
  const instance = await findInstance(context, instanceName);
  if (instance.service !== service.name) throw notFound(`Service instance "${instanceName}" not found in the service "${serviceName}".`);
  const below = request.segments.join("/");
  authorizeInstanceCall(actor, service, instance, request.method, `/${below}`);
  if (READ_ONLY_SUBPATHS.includes(request.segments.map(routedSegment).filter((segment) => segment !== "").join("/")) && request.method !== "GET") {
    throw badRequest(`proxy request ${request.method} "${below}" is forbidden: the platform itself makes the calls that change an instance or its binds.`);
  }
  const path = `/resources/${encodeURIComponent(instance.name)}${below === "" ? "" : `/${providerPath(request.segments)}`}`;
  return forward(context, actor, { service, instance: instance.name, pool: instance.pool }, request, path);
}

/**
 * Who may make a call below an instance (authorizeServiceInstanceProxy): without an enabled
 * manifest, the users with access to the instance. With one, the holders of the permission of
 * the action the call matches; besides them, the users with access to the instance for a call
 * matching no action unless `strict_actions`, and for a matched one when `legacy_compat`.
 */
function authorizeInstanceCall(actor: Actor, service: Service, instance: Instance, method: string, path: string): void {
  const manifest = service.actionsManifest;
  if (!manifest?.enabled) return assertInstanceAccess(actor, instance);
  const operation = matchOperation(manifest, method, path);
  if (operation && holdsAction(actor, service, operation.action, instance.teams)) return;
  const generalRuleApplies = operation ? manifest.legacy_compat : !manifest.strict_actions;
  if (generalRuleApplies && sharesTeam(actor, instance.teams)) return;
  if (operation) {
    throw forbidden(
      `${method} ${path} on the service instance "${instance.name}" is the action "${operation.action}": it needs the permission ` +
        `${actionPermission(service.name, operation.action)}, which no team of yours with access to the instance holds. ` +
        `Ask an owner of the service "${service.name}" to grant it to your team.`,
    );
  }
  if (manifest.strict_actions) {
    throw forbidden(`The service "${service.name}" accepts only the calls its manifest lists (strict_actions), and ${method} ${path} matches none of them.`);
  }
  assertInstanceAccess(actor, instance);
}

/** The service proxy: any path of the provider, for the service's owner teams. */
export async function proxyServiceCall(context: Context, actor: Actor, serviceName: string, request: ProxiedRequest): Promise<ProxiedAnswer> {
  const service = await findService(context, serviceName);
  if (!sharesTeam(actor, service.ownerTeams)) throw forbidden(`Only the teams owning the service "${serviceName}" may use its proxy.`);
  return forward(context, actor, { service, senderTeams: actor.teams }, request, `/${providerPath(request.segments)}`);
}

/** `/authenticated-resources/...`: the platform checks no permission beyond being logged in. */
export async function proxyAuthenticatedCall(context: Context, actor: Actor, serviceName: string, request: ProxiedRequest): Promise<ProxiedAnswer> {
  const service = await findService(context, serviceName);
  return forward(context, actor, { service, senderTeams: actor.teams }, request, `/authenticated-resources/${providerPath(request.segments)}`);
}

const ANSWER_LIMIT = "1 MiB";

/** Proxied calls in flight, per platform and user. */
const inFlight = new WeakMap<Context, Map<string, number>>();

async function forward(context: Context, actor: Actor, target: CallTarget, request: ProxiedRequest, path: string): Promise<ProxiedAnswer> {
  const { perUser, timeoutMs } = context.providers.proxyLimits;
  const counts = inFlight.get(context) ?? new Map<string, number>();
  inFlight.set(context, counts);
  const mine = counts.get(actor.email) ?? 0;
  if (mine >= perUser) {
    throw tooManyRequests(`You already have ${mine} proxied calls in flight (at most ${perUser} at once): wait for one to be answered.`);
  }
  counts.set(actor.email, mine + 1);
  try {
    return await send(context, actor, target, request, path, timeoutMs);
  } finally {
    const left = (counts.get(actor.email) ?? 1) - 1;
    if (left === 0) counts.delete(actor.email);
    else counts.set(actor.email, left);
  }
}

async function send(context: Context, actor: Actor, target: CallTarget, request: ProxiedRequest, path: string, timeoutMs: number): Promise<ProxiedAnswer> {
  // Only a write is an event of the platform, and only an event names its user to the provider.
  const write = request.method !== "GET" && request.method !== "HEAD";
  const call = {
    method: request.method,
    path: request.query === "" ? path : `${path}?${request.query}`,
    raw: write ? (request.body ?? { body: "" }) : { body: "" },
    ...(write ? { event: { user: actor.email } } : {}),
  };
  const result = await context.providers.send(target, call, { timeoutMs, signal: request.signal });
  const { answer } = result;
  const provider = `The provider of the service "${target.service.name}"`;
  if (!answer) throw new PlatformError(`${provider} did not answer: ${result.error ?? "no answer"}.`, 502);
  if (answer.truncated) throw new PlatformError(`The provider's answer is larger than the ${ANSWER_LIMIT} the platform forwards.`, 502);
  // An informational status (101 Switching Protocols...) or one outside HTTP's would be the platform's own answer if relayed.
  if (answer.status < 200 || answer.status > 599) {
    throw new PlatformError(`${provider} answered with the status ${answer.status}, which is not a final HTTP answer the platform can forward.`, 502);
  }
  return { status: answer.status, contentType: answer.contentType, contentEncoding: answer.contentEncoding, body: answer.bytes };
}
