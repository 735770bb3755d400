/**
 * `createProvider`: the whole HTTP surface in one place, the middleware order and the route table.
 * Each route's parsing and answer live in its file under `src/endpoints/`; the shared mechanics
 * (auth, bodies, request ids and logging, timeouts, error answers) in `src/http/`.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import express, { type Express, type Request, type RequestHandler, type Response } from "express";
import { create } from "./endpoints/create.js";
import { bindApp } from "./endpoints/bind-app.js";
import { bindHostname } from "./endpoints/bind-hostname.js";
import { bindJob } from "./endpoints/bind-job.js";
import { bindUnit } from "./endpoints/bind-unit.js";
import { destroy } from "./endpoints/destroy.js";
import { info } from "./endpoints/info.js";
import { plans } from "./endpoints/plans.js";
import { status } from "./endpoints/status.js";
import { unbindApp } from "./endpoints/unbind-app.js";
import { unbindHostname } from "./endpoints/unbind-hostname.js";
import { unbindJob } from "./endpoints/unbind-job.js";
import { unbindUnit } from "./endpoints/unbind-unit.js";
import { update } from "./endpoints/update.js";
import { actionRoutes } from "./endpoints/action.js";
import { osbRouter } from "./osb/routes.js";
import { checkActions } from "./actions.js";
import { authentication } from "./http/auth.js";
import { bodyParsing } from "./http/body.js";
import { createDrain } from "./http/drain.js";
import { mountEndpoint, type Endpoint, type EndpointDeps } from "./http/endpoint.js";
import { answerLastError, answerUnrouted, errorAnswer, notFound } from "./http/errors.js";
import { HEALTHCHECK_PATH, healthcheck, type HealthCheck } from "./http/healthcheck.js";
import { guardRoutes, leavingOptions, type Method, type Next, type RouteHandler } from "./http/router.js";
import { requestScopes, type RequestScopes } from "./http/scope.js";
import { deadlinesOf } from "./http/timeout.js";
import { statelessLifecycle } from "./lifecycle/lifecycle.js";
import { registryLifecycle } from "./lifecycle/registry.js";
import { createMetrics, probeStore, type ProviderMetrics } from "./metrics.js";
import { VARIANTS, type Variant } from "./contract.js";
import { resolveOptions, type ProviderOptions } from "./options.js";
import { ConfigurationError } from "./errors.js";
import type { ProviderHandlers } from "./types.js";

interface Route {
  method: Method;
  path: string;
  variants: readonly Variant[];
  mount(deps: EndpointDeps): RouteHandler;
}

/** Each endpoint keeps its own request and result types; the table only needs to mount it. */
function route<Req, Res>(method: Route["method"], path: string, endpoint: Endpoint<Req, Res>, variants: readonly Variant[]): Route {
  return { method, path, variants, mount: (deps) => mountEndpoint(endpoint, deps) };
}

/**
 * Routes are tried in this order: `/resources/plans` before `/resources/:instance` (the one
 * overlap; `plans` is a reserved instance name).
 */
const ROUTES: readonly Route[] = [
  route("get", "/resources/:instance/status", status, VARIANTS),
  route("post", "/resources/:instance/bind-app", bindApp, ["A", "current"]),
  route("delete", "/resources/:instance/bind-app", unbindApp, ["A", "current"]),
  route("post", "/resources/:instance/bind", bindUnit, ["A", "current"]),
  route("delete", "/resources/:instance/bind", unbindUnit, ["A", "current"]),
  route("put", "/resources/:instance/binds/jobs/:job", bindJob, ["current"]),
  route("delete", "/resources/:instance/binds/jobs/:job", unbindJob, ["current"]),
  route("get", "/resources/plans", plans, ["A", "current"]),
  route("post", "/resources", create, VARIANTS),
  route("get", "/resources/:instance", info, VARIANTS),
  route("put", "/resources/:instance", update, ["current"]),
  route("delete", "/resources/:instance", destroy, VARIANTS),
  route("post", "/resources/:instance", bindHostname, ["B"]),
  route("delete", "/resources/:instance/hostname/:host", unbindHostname, ["B"]),
];

/**
 * An Express application that can shut down cleanly, served the same way however it is served:
 * `.listen()`, `http.createServer(provider)`, or mounted in another app (`app.use("/redis", provider)`).
 */
export type Provider = Express & {
  /** The provider as a plain request listener, for a server of your own: the same as passing the provider. */
  requestListener: RequestListener;
  /**
   * Answer 503 to new requests, wait for those in flight (with the registry, also for handlers
   * past their timeout, until their instance lock is let go), then stop the background work.
   * Every call gets the same promise.
   */
  close(): Promise<void>;
  /** The provider's prom-client registry: add your own metrics to it. */
  metricsRegistry: ProviderMetrics["registry"];
  /** Answers a request with the metrics in the Prometheus text format, for serving them on a port of their own. */
  serveMetrics: ProviderMetrics["serve"];
};

const METRICS_PATH = "/metrics";

/** `GET /metrics`, mounted after auth. */
function metricsRoute(metrics: ProviderMetrics): RouteHandler {
  return (req, res) => metrics.serve(req, res);
}

/** Express's `app.handle`, which an app mounted in another runs: it has no type of its own. */
type Handle = (req: IncomingMessage, res: ServerResponse, next?: Next) => void;

/**
 * What ends a request once the provider's router is done with it. An error of its routes (or of
 * anything added on it) is answered here, mounted or not: the parent app never sees it. What no
 * route served goes on to `next` (mounted: the parent app's later routes, untouched) or, as the
 * server itself, its 404 behind auth.
 */
function finishing(scopes: RequestScopes, auth: RequestHandler | undefined, req: Request, res: Response, next: Next | undefined): Next {
  return (error?: unknown) => {
    if (error === undefined || error === null) {
      if (next !== undefined) next();
      else answerUnrouted(scopes, auth, notFound, req, res);
      return;
    }
    answerLastError(scopes, errorAnswer, error, req, res);
  };
}

/**
 * The app as its callers see it: however it is called (`http.createServer(provider)`, `.listen()`,
 * `app.use(provider)`, which calls `provider.handle`, or `router.use(provider)`, which calls it as
 * middleware), its router runs and `finishing` ends the request. Everything else is the Express
 * app itself: its methods, settings and router are reached through the prototype.
 */
function answeringItsOwn(app: Express, scopes: RequestScopes, auth: RequestHandler | undefined): Express {
  const expressHandle = (app as unknown as { handle: Handle }).handle.bind(app);
  const handle: Handle = (req, res, next) => expressHandle(req, res, finishing(scopes, auth, req as Request, res as Response, next));
  // Called with `next` as a middleware (`router.use(provider)`, which does not look for `handle`), without it as a server.
  const provider = Object.setPrototypeOf((req: IncomingMessage, res: ServerResponse, next?: Next) => handle(req, res, next), app) as Express;
  return Object.assign(provider, { handle });
}

const REQUIRED_HANDLERS = ["create", "destroy", "bindApp", "unbindApp"] as const;

function checkHandlers(handlers: ProviderHandlers): void {
  for (const name of REQUIRED_HANDLERS) {
    if (typeof handlers?.[name] !== "function") {
      throw new ConfigurationError(`createProvider: handlers.${name} is required (an async function).`);
    }
  }
  if (handlers.actions !== undefined) checkActions(handlers.actions);
}

export function createProvider(handlers: ProviderHandlers, options: ProviderOptions): Provider {
  checkHandlers(handlers);
  const config = resolveOptions(options);
  const metrics = createMetrics();
  const registry = config.registry === false ? undefined : registryLifecycle(handlers, config.registry, config.logger, metrics.steps);
  const lifecycle = registry ?? statelessLifecycle(handlers);
  const { store } = lifecycle;
  if (store) metrics.observeStore(store);
  const healthChecks: Array<readonly [string, HealthCheck]> = [
    ...(store ? [["state store", () => probeStore(store)] as const] : []),
    ...config.healthChecks,
  ];
  const drain = createDrain();
  let closed: Promise<void> | undefined;
  const deadlines = deadlinesOf(config.handlerTimeoutMs);
  const deps = { lifecycle, logger: config.logger, deadlines };

  const app = express();
  // No ETag work on tiny answers, no framework banner, no query parsing (the API uses none).
  app.disable("etag");
  app.disable("x-powered-by");
  app.set("query parser", false);

  const scopes = requestScopes(config.logger, config.requestIdHeader, drain, metrics); // request id, in-flight count, log line, metrics
  app.enable("case sensitive routing"); // before the router is made, on first use
  const { router } = app;
  const body = bodyParsing({ bytes: config.bodyLimitBytes, formFields: config.formFieldLimit });
  if (config.osb) {
    if (registry === undefined) throw new ConfigurationError("createProvider: osb needs the registry: pass registry: { store }.");
    // First, OPTIONS included: /v2 is OSB's, with its own answers (see osb/routes.ts).
    router.use(osbRouter(config.osb, handlers, { lifecycle: registry, logger: config.logger, deadlines }, { scopes, auth: config.auth, body }));
  }
  router.use(leavingOptions);
  // Load balancers probe exactly /healthcheck (no trailing slash), without credentials.
  const exactly = (path: string): RequestHandler => (req, _res, next) => next(req.path === path ? undefined : "route");
  router.get(HEALTHCHECK_PATH, exactly(HEALTHCHECK_PATH), scopes.enter, healthcheck(healthChecks, config.healthCheckTimeoutMs));
  // Every route from here on, the provider's and those added on it (`provider.get(...)`), runs behind this guard.
  const auth = config.auth === false ? undefined : authentication(config.auth);
  guardRoutes(router, auth === undefined ? [scopes.enter, body] : [scopes.enter, auth, body]);
  const served = ROUTES.filter(({ variants }) => variants.some((variant) => config.variants.has(variant)));
  const routes = served.map(({ method, path, mount }) => ({ method, path, handler: mount(deps) }));
  routes.push(...actionRoutes(handlers.actions, deps)); // after the contract's, which they never overlap
  if (config.metricsRoute) routes.push({ method: "get", path: METRICS_PATH, handler: metricsRoute(metrics) });
  for (const { method, path, handler } of routes) router[method](path, handler);
  const provider = answeringItsOwn(app, scopes, auth);

  return Object.assign(provider, {
    requestListener: provider,
    metricsRegistry: metrics.registry,
    serveMetrics: metrics.serve,
    close() {
      closed ??= drain.close().then(() => lifecycle.close());
      return closed;
    },
  });
}
