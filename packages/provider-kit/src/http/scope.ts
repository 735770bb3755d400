/**
 * Per-request bookkeeping: the request id (read from the configured header, generated when
 * absent, echoed in the answer), the in-flight count `close()` waits on, and, when the answer is
 * done, the ONE log line and the request metrics.
 * The line holds who/what/how long, never headers, bodies or bind results (secrets live there).
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, Response } from "express";
import type { Logger } from "pino";
import type { ProviderMetrics } from "../metrics.js";
import type { Drain } from "./drain.js";
import type { Encoding } from "../contract.js";
import type { Next } from "./router.js";

export interface RequestScope {
  readonly requestId: string;
  readonly startedAt: number;
  /** The request path, without the query (and without the mount prefix when mounted). */
  readonly path: string;
  /** The route pattern that matched (`/resources/:instance/bind-app`); unset on 404. */
  route?: string;
  /** The matched route's path parameters, percent-decoded. */
  params: Readonly<Record<string, string>>;
  instance?: string;
  user?: string;
  eventId?: string;
  /** The body as parsed (form keys to text or lists, or any JSON value); undefined without a body. */
  body: unknown;
  encoding: Encoding;
  /** The custom action the route serves (`rotate-password`); unset on the contract's routes. */
  action?: string;
  /** What went wrong behind a 5xx answer, for the log line only. */
  error?: unknown;
  /** Why a 4xx answer refused the call: its message, which the caller reads too. */
  reason?: string;
  /** Counted among the requests `close()` waits for (false once closing began: answered 503). */
  admitted: boolean;
}

const SCOPE = Symbol("provider-kit.scope");
type ScopedRequest = IncomingMessage & { [SCOPE]?: RequestScope };

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/** The scope `requestScopes` opened; every later middleware runs after it. */
export function scopeOf(req: IncomingMessage): RequestScope {
  const scope = (req as ScopedRequest)[SCOPE];
  if (scope === undefined) throw new Error("provider-kit: the request scope is not opened first.");
  return scope;
}

/** Visible ASCII, bounded: anything else from the caller is replaced by a fresh id. */
const ACCEPTABLE_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

function requestIdOf(req: IncomingMessage, header: string): string {
  const given = req.headers[header];
  return typeof given === "string" && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Only the fields that are set: pino would drop `undefined` ones anyway, after visiting them. */
function logLine(logger: Logger, req: IncomingMessage, res: ServerResponse, scope: RequestScope, durationMs: number): void {
  const line: Record<string, unknown> = { method: req.method, path: scope.path };
  if (scope.route !== undefined) line.route = scope.route;
  if (scope.action !== undefined) line.action = scope.action;
  if (scope.instance !== undefined) line.instance = scope.instance;
  line.status = res.statusCode;
  line.durationMs = Math.round(durationMs * 10) / 10;
  line.requestId = scope.requestId;
  if (scope.user !== undefined) line.user = scope.user;
  if (scope.eventId !== undefined) line.eventId = scope.eventId;
  if (scope.reason !== undefined) line.reason = scope.reason;
  // The caller went away before the answer was complete.
  if (!res.writableFinished) line.aborted = true;
  if (res.statusCode < 500) return logger.info(line, "request");
  line.err = scope.error;
  logger.error(line, "request failed");
}

/** What `requestScopes` gives the provider's router. */
export interface RequestScopes {
  /**
   * First on every route, once one matched: opens the request's scope (once, however many routes
   * it passes) and records the route and its parameters. A provider that is closing answers 503.
   */
  enter(req: Request, res: Response, next: Next): void;
  /** Opens the scope of a request no route took (the provider's 404, an undecodable path): false when answered 503. */
  open(req: Request, res: Response): boolean;
}

export function requestScopes(logger: Logger, requestIdHeader: string, drain: Drain, metrics: ProviderMetrics): RequestScopes {
  // One listener for every answer (`this` is the response): no closure per request.
  function answered(this: ServerResponse): void {
    const scope = scopeOf(this.req);
    if (scope.admitted) drain.release();
    const durationMs = performance.now() - scope.startedAt;
    metrics.request(this.req.method ?? "", scope.route, this.statusCode, durationMs / 1_000, scope.error !== undefined);
    logLine(logger, this.req, this, scope, durationMs);
  }

  const open = (req: Request, res: Response): boolean => {
    const opened = (req as ScopedRequest)[SCOPE];
    if (opened !== undefined) return opened.admitted;
    // Every property set up front: one object shape for all requests keeps property access fast.
    const scope: RequestScope = {
      requestId: requestIdOf(req, requestIdHeader),
      startedAt: performance.now(),
      path: req.path,
      route: undefined,
      params: NO_PARAMS,
      instance: undefined,
      user: undefined,
      eventId: undefined,
      body: undefined,
      encoding: "form",
      action: undefined,
      error: undefined,
      reason: undefined,
      admitted: drain.admit(),
    };
    (req as ScopedRequest)[SCOPE] = scope;
    res.setHeader(requestIdHeader, scope.requestId);
    res.on("close", answered);
    if (scope.admitted) return true;
    drain.refuse(res);
    return false;
  };

  return {
    open,
    enter(req, res, next) {
      if (!open(req, res)) return;
      const scope = scopeOf(req);
      scope.route = (req.route as { path: string }).path;
      scope.params = req.params as Record<string, string>;
      next();
    },
  };
}
