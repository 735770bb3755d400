/**
 * `createProvider`: the whole HTTP surface in one place, the middleware order and the route table.
 * Each route's parsing and answer live in its file under `src/endpoints/`; the shared mechanics
 * (auth, bodies, request ids and logging, timeouts, error answers) in `src/http/`.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from "node:http";
import express, { type Express, type RequestHandler } from "express";
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
import { osbRoutes } from "./osb/routes.js";
import { checkActions } from "./actions.js";
import { authentication } from "./http/auth.js";
import { bodyParsing } from "./http/body.js";
import { createDrain } from "./http/drain.js";
import { directListener, failed } from "./http/direct.js";
import { mountEndpoint, type Endpoint, type EndpointDeps } from "./http/endpoint.js";
import { notFound } from "./http/errors.js";
import { HEALTHCHECK_PATH, healthcheck, type HealthCheck } from "./http/healthcheck.js";
import { pipeline } from "./http/pipeline.js";
import { routeTable, type Method, type Next, type RouteHandler } from "./http/router.js";
import { requestScopes } from "./http/scope.js";
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
 * An Express application that can shut down cleanly. `.listen()` serves the provider's routes
 * straight from `node:http` and hands anything else (routes you added to the app) to Express;
 * `app.use(prefix, provider)` mounts it all inside another Express app.
 */
export type Provider = Express & {
  /** What `.listen()` serves, for a server of your own: `http.createServer(provider.requestListener)`. */
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

/** What ends a request no route served, when the provider is the server's top-level handler. */
function lastAnswer(req: IncomingMessage, res: ServerResponse): Next {
  return (error?: unknown) => {
    if (error !== undefined && error !== null) return failed(error, req, res);
    if (res.headersSent) return req.socket.destroy();
    notFound(req, res);
  };
}

/**
 * The app as its callers see it. Called with a `next` (mounted in another app), what the
 * provider and the routes added to it do not serve goes back to that app, errors to its error
 * handlers; called without one (`http.createServer(provider)`, `.listen()`), the provider's own
 * 404 and error answers end the request. Everything else is the Express app itself: its
 * methods, settings and router are reached through the prototype.
 */
function answeringWhatIsLeft(app: Express): Express {
  const handler = (req: IncomingMessage, res: ServerResponse, next?: Next): void => {
    app(req as never, res as never, next ?? lastAnswer(req, res));
  };
  return Object.setPrototypeOf(handler, app) as Express;
}

/** Express's own `listen`, with the direct listener in place of the app. */
function listenWith(listener: RequestListener): Express["listen"] {
  return ((...args: unknown[]) => {
    const server = createServer(listener);
    const last = args.at(-1);
    if (typeof last === "function") {
      const callback = last as (...results: unknown[]) => void;
      let called = false;
      const once = (...results: unknown[]) => {
        if (called) return;
        called = true;
        callback(...results);
      };
      args[args.length - 1] = once;
      server.once("error", once);
    }
    return server.listen(...(args as Parameters<typeof server.listen>));
  }) as Express["listen"];
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
  const lifecycle =
    config.registry === false
      ? statelessLifecycle(handlers)
      : registryLifecycle(handlers, config.registry, config.logger, metrics.steps);
  const { store } = lifecycle;
  if (store) metrics.observeStore(store);
  const healthChecks: Array<readonly [string, HealthCheck]> = [
    ...(store ? [["state store", () => probeStore(store)] as const] : []),
    ...config.healthChecks,
  ];
  const drain = createDrain();
  let closed: Promise<void> | undefined;
  const deps = { lifecycle, logger: config.logger, deadlines: deadlinesOf(config.handlerTimeoutMs) };

  const app = express();
  // No ETag work on tiny answers, no framework banner, no query parsing (the API uses none).
  app.disable("etag");
  app.disable("x-powered-by");
  app.set("query parser", false);

  const served = ROUTES.filter(({ variants }) => variants.some((variant) => config.variants.has(variant)));
  const routes = served.map(({ method, path, mount }) => ({ method, path, handler: mount(deps) }));
  routes.push(...actionRoutes(handlers.actions, deps)); // after the contract's, which they never overlap
  if (config.osb) routes.push(...osbRoutes(config.osb, handlers, deps)); // under /v2, which no native route uses
  if (config.metricsRoute) routes.push({ method: "get", path: METRICS_PATH, handler: metricsRoute(metrics) });
  const openScope = requestScopes(config.logger, config.requestIdHeader, drain, metrics); // request id, in-flight count, log line, metrics
  const open = routeTable([{ method: "get", path: HEALTHCHECK_PATH, handler: healthcheck(healthChecks, config.healthCheckTimeoutMs) }], {
    trailingSlash: false, // load balancers probe exactly /healthcheck
  });
  const auth = config.auth === false ? undefined : authentication(config.auth);
  const body = bodyParsing({ bytes: config.bodyLimitBytes, formFields: config.formFieldLimit });
  const guarded = routeTable(routes);

  // The same middleware in the same order both ways in: through Express here, straight from node:http
  // in `directListener`. One Express layer for the whole surface: Express's router matches and
  // dispatches per layer. No provider route: on to the routes the user added, then `notFound`.
  const scoped: RequestHandler = (req, res, next) => {
    if (openScope(req, res, req.path)) next();
  };
  app.use(pipeline(scoped, open.middleware, ...(auth === undefined ? [] : [auth.check]), body, guarded.middleware));
  const provider = answeringWhatIsLeft(app);
  const requestListener = directListener({ openScope, open, guarded, admits: auth?.admits, body, express: provider });

  return Object.assign(provider, {
    requestListener,
    listen: listenWith(requestListener),
    metricsRegistry: metrics.registry,
    serveMetrics: metrics.serve,
    close() {
      closed ??= drain.close().then(() => lifecycle.close());
      return closed;
    },
  });
}
