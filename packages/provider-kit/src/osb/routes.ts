/**
 * The Open Service Broker API v2.17 as a router of its own under `/v2`, as hono's `app.route` and
 * fastify's encapsulated plugins give a sub-app its own answers: the same request scope, auth,
 * body reading, timeout, log line and metrics as the native routes, on the same lifecycle
 * (registry, locks, background steps), but every answer under `/v2` is OSB's JSON, whoever
 * raised it: auth (401), body reading (400, 413, 415), an undecodable path (400), a path or
 * method it has no route for (404), the handler timeout (500). Each call checks
 * `X-Broker-API-Version` first and answers its errors as OSB does (`errors.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Router, type Request, type RequestHandler, type Response } from "express";
import { authentication } from "../http/auth.js";
import { answerLastError, answerUnrouted } from "../http/errors.js";
import { mountCall, type EndpointDeps } from "../http/endpoint.js";
import type { Method, Middleware, Next, RouteHandler } from "../http/router.js";
import type { RequestScopes } from "../http/scope.js";
import type { RegistryLifecycle } from "../lifecycle/registry.js";
import type { AuthOptions } from "../options.js";
import type { ProviderHandlers } from "../types.js";
import { bind } from "./bind.js";
import { checkVersion, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { catalog } from "./catalog.js";
import { deprovision } from "./deprovision.js";
import { osbErrorAnswer, osbNotFound, osbUnauthorized } from "./errors.js";
import { fetchBinding } from "./fetch-binding.js";
import { fetchInstance } from "./fetch-instance.js";
import { lastOperation } from "./last-operation.js";
import type { ResolvedOsbOptions } from "./options.js";
import { provision } from "./provision.js";
import { unbind } from "./unbind.js";
import { update } from "./update.js";

const PREFIX = "/v2";
const INSTANCE = `${PREFIX}/service_instances/:instance_id`;
const BINDING = `${INSTANCE}/service_bindings/:binding_id`;
const REQUEST_IDENTITY = "x-broker-api-request-identity";

/** The paths OSB owns: `/v2` and everything under it. */
const underPrefix = (req: IncomingMessage & { path?: string }) => req.path === PREFIX || req.path?.startsWith(`${PREFIX}/`) === true;

/** The platform's request identity, echoed as OSB recommends (the provider's own request id header is set too). */
function echoRequestIdentity(req: IncomingMessage, res: ServerResponse): void {
  const identity = req.headers[REQUEST_IDENTITY];
  if (typeof identity === "string" && /^[\x21-\x7e]{1,200}$/.test(identity)) res.setHeader("X-Broker-API-Request-Identity", identity);
}

function mountOsb<Req>(call: OsbCallDefinition<Req>, deps: EndpointDeps<RegistryLifecycle>): RouteHandler {
  const parse: OsbCallDefinition<Req>["parse"] = (req, scope) => {
    checkVersion(req);
    return call.parse(req, scope);
  };
  return mountCall({ ...call, parse }, deps);
}

/** What the OSB router shares with the provider's own: the request scopes, auth options and body reading. */
export interface OsbGuard {
  scopes: RequestScopes;
  auth: Required<AuthOptions> | false;
  body: Middleware;
}

/**
 * The OSB router, mounted before the provider's own routes: it takes every request under `/v2`
 * (OPTIONS included) and leaves every other one untouched: those go on without entering it, so
 * the native calls never walk its routes.
 */
export function osbRouter(options: ResolvedOsbOptions, handlers: ProviderHandlers, deps: EndpointDeps<RegistryLifecycle>, guard: OsbGuard): RequestHandler {
  const osbDeps: OsbDeps = { options, handlers };
  const { scopes } = guard;
  const auth = guard.auth === false ? undefined : authentication(guard.auth, osbUnauthorized);
  const guards: RequestHandler[] = auth === undefined ? [scopes.enter, guard.body] : [scopes.enter, auth, guard.body];
  const router = Router({ caseSensitive: true });
  router.use((req, res, next) => {
    echoRequestIdentity(req, res);
    next();
  });
  const route = <Req>(method: Method, path: string, call: OsbCallDefinition<Req>) => router[method](path, ...guards, mountOsb(call, deps));
  route("get", `${PREFIX}/catalog`, catalog(osbDeps));
  route("get", `${INSTANCE}/last_operation`, lastOperation(osbDeps));
  route("put", BINDING, bind(osbDeps));
  route("delete", BINDING, unbind(osbDeps));
  route("get", BINDING, fetchBinding(osbDeps));
  route("put", INSTANCE, provision(osbDeps));
  route("patch", INSTANCE, update(osbDeps));
  route("delete", INSTANCE, deprovision(osbDeps));
  route("get", INSTANCE, fetchInstance(osbDeps));
  // No route took it: behind auth, OSB's 404 (never 405, as the native routes).
  router.use((req: Request, res: Response) => answerUnrouted(scopes, auth, osbNotFound, req, res));
  // Whatever went wrong under /v2, before its handler (body, path decoding) or in it, is answered here.
  router.use((error: unknown, req: Request, res: Response, _next: Next) => answerLastError(scopes, osbErrorAnswer, error, req, res));
  return (req, res, next) => (underPrefix(req) ? router(req, res, next) : next());
}
