/**
 * `createProvider`: the whole HTTP surface in one place, the middleware order and the route table.
 * Each route's parsing and answer live in its file under `src/endpoints/`; the shared mechanics
 * (auth, bodies, request ids and logging, timeouts, error answers) in `src/http/`.
 */
import express, { type Express } from "express";
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
import { authentication } from "./http/auth.js";
import { bodyParsing } from "./http/body.js";
import { createDrain } from "./http/drain.js";
import { mountEndpoint, type Endpoint } from "./http/endpoint.js";
import { errorAnswer, notFound } from "./http/errors.js";
import { healthcheck } from "./http/healthcheck.js";
import { pipeline } from "./http/pipeline.js";
import { requestScope } from "./http/scope.js";
import { statelessLifecycle } from "./lifecycle/lifecycle.js";
import { registryLifecycle } from "./lifecycle/registry.js";
import { ConfigurationError, resolveOptions, type ProviderOptions, type Variant } from "./options.js";
import type { ProviderHandlers } from "./types.js";

interface Route {
  method: "get" | "post" | "put" | "delete";
  path: string;
  // Each endpoint has its own request and result types; the table only routes to them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  endpoint: Endpoint<any, any>;
  variants: readonly Variant[];
}

const ALL: readonly Variant[] = ["A", "B", "current"];

/**
 * The router tries paths in this order: the hot calls first, and `/resources/plans` before
 * `/resources/:instance` (the one overlap; `plans` is a reserved instance name).
 */
export const ROUTES: readonly Route[] = [
  { method: "get", path: "/resources/:instance/status", endpoint: status, variants: ALL },
  { method: "post", path: "/resources/:instance/bind-app", endpoint: bindApp, variants: ["A", "current"] },
  { method: "delete", path: "/resources/:instance/bind-app", endpoint: unbindApp, variants: ["A", "current"] },
  { method: "post", path: "/resources/:instance/bind", endpoint: bindUnit, variants: ["A", "current"] },
  { method: "delete", path: "/resources/:instance/bind", endpoint: unbindUnit, variants: ["A", "current"] },
  { method: "put", path: "/resources/:instance/binds/jobs/:job", endpoint: bindJob, variants: ["current"] },
  { method: "delete", path: "/resources/:instance/binds/jobs/:job", endpoint: unbindJob, variants: ["current"] },
  { method: "get", path: "/resources/plans", endpoint: plans, variants: ["A", "current"] },
  { method: "post", path: "/resources", endpoint: create, variants: ALL },
  { method: "get", path: "/resources/:instance", endpoint: info, variants: ALL },
  { method: "put", path: "/resources/:instance", endpoint: update, variants: ["current"] },
  { method: "delete", path: "/resources/:instance", endpoint: destroy, variants: ALL },
  { method: "post", path: "/resources/:instance", endpoint: bindHostname, variants: ["B"] },
  { method: "delete", path: "/resources/:instance/hostname/:host", endpoint: unbindHostname, variants: ["B"] },
];

/** An Express application (`.listen()`, or `app.use(prefix, provider)`) that can shut down cleanly. */
export type Provider = Express & {
  /** Answer 503 to new requests, wait for those in flight, then stop the lifecycle. */
  close(): Promise<void>;
};

const REQUIRED_HANDLERS = ["create", "destroy", "bindApp", "unbindApp"] as const;

function checkHandlers(handlers: ProviderHandlers): void {
  for (const name of REQUIRED_HANDLERS) {
    if (typeof handlers?.[name] !== "function") {
      throw new ConfigurationError(`createProvider: handlers.${name} is required (an async function).`);
    }
  }
}

export function createProvider(handlers: ProviderHandlers, options: ProviderOptions): Provider {
  checkHandlers(handlers);
  const config = resolveOptions(options);
  const lifecycle =
    config.registry === false
      ? statelessLifecycle(handlers)
      : registryLifecycle(handlers, config.registry, config.logger);
  const drain = createDrain();
  const deps = { lifecycle, logger: config.logger, handlerTimeoutMs: config.handlerTimeoutMs };

  const app = express();
  // No ETag work on tiny answers, no framework banner, no query parsing (the API uses none).
  app.disable("etag");
  app.disable("x-powered-by");
  app.set("query parser", false);

  app.use(
    pipeline(
      requestScope(config.logger, config.requestIdHeader, drain), // request id, in-flight count, the log line
      healthcheck, // answered before auth
      ...(config.auth === false ? [] : [authentication(config.auth)]),
      bodyParsing(config.bodyLimitBytes),
    ),
  );
  // One router layer per path, its methods inside: fewer layers to try per request.
  const paths = new Map<string, ReturnType<typeof app.route>>();
  for (const { method, path, endpoint, variants } of ROUTES) {
    if (!variants.some((variant) => config.variants.has(variant))) continue;
    if (!paths.has(path)) paths.set(path, app.route(path));
    paths.get(path)?.[method](mountEndpoint(path, endpoint, deps));
  }
  app.use(notFound);
  app.use(errorAnswer);

  return Object.assign(app, {
    async close() {
      await drain.close();
      await lifecycle.close();
    },
  });
}
