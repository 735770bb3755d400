/**
 * Per-request bookkeeping: the request id (read from the configured header, generated when
 * absent, echoed in the answer), the in-flight count `close()` waits on, and, when the answer is
 * done, the ONE log line and the request metrics.
 * The line holds who/what/how long, never headers, bodies or bind results (secrets live there).
 */
import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { IncomingMessage } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import type { Logger } from "pino";
import type { ProviderMetrics } from "../metrics.js";
import type { Drain } from "./drain.js";
import type { Encoding, Fields } from "./fields.js";

export interface RequestScope {
  readonly requestId: string;
  readonly startedAt: number;
  /** The route pattern that matched (`/resources/:instance/bind-app`); unset on 404. */
  route?: string;
  instance?: string;
  user?: string;
  eventId?: string;
  /** The body as canonical fields (empty without a body). */
  fields: Fields;
  encoding: Encoding;
  /** What went wrong behind a 5xx answer, for the log line only. */
  error?: unknown;
  /** Why a 4xx answer refused the call: its message, which the caller reads too. */
  reason?: string;
  /** Counted among the requests `close()` waits for (false once closing began: answered 503). */
  admitted: boolean;
}

const SCOPE = Symbol("provider-kit.scope");
type ScopedRequest = IncomingMessage & { [SCOPE]?: RequestScope };

const NO_FIELDS: Fields = Object.freeze({});

/** The scope `requestScope` attached; every later middleware runs after it. */
export function scopeOf(req: Request): RequestScope {
  const scope = (req as ScopedRequest)[SCOPE];
  if (scope === undefined) throw new Error("provider-kit: requestScope middleware is not mounted first.");
  return scope;
}

/** Visible ASCII, bounded: anything else from the caller is replaced by a fresh id. */
const ACCEPTABLE_REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

function requestIdOf(req: IncomingMessage, header: string): string {
  const given = req.headers[header];
  return typeof given === "string" && ACCEPTABLE_REQUEST_ID.test(given) ? given : randomUUID();
}

/** Only the fields that are set: pino would drop `undefined` ones anyway, after visiting them. */
function logLine(logger: Logger, req: Request, res: Response, scope: RequestScope, durationMs: number): void {
  const line: Record<string, unknown> = { method: req.method, path: req.path };
  if (scope.route !== undefined) line.route = scope.route;
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

export function requestScope(logger: Logger, requestIdHeader: string, drain: Drain, metrics: ProviderMetrics): RequestHandler {
  // One listener for every answer (`this` is the response): no closure per request.
  function answered(this: Response): void {
    const scope = scopeOf(this.req);
    if (scope.admitted) drain.release();
    const durationMs = performance.now() - scope.startedAt;
    metrics.request(this.req.method, scope.route, this.statusCode, durationMs / 1_000, scope.error !== undefined);
    logLine(logger, this.req, this, scope, durationMs);
  }

  return (req, res, next) => {
    // Every property set up front: one object shape for all requests keeps property access fast.
    const scope: RequestScope = {
      requestId: requestIdOf(req, requestIdHeader),
      startedAt: performance.now(),
      route: undefined,
      instance: undefined,
      user: undefined,
      eventId: undefined,
      fields: NO_FIELDS,
      encoding: "form",
      error: undefined,
      reason: undefined,
      admitted: drain.admit(),
    };
    (req as ScopedRequest)[SCOPE] = scope;
    res.setHeader(requestIdHeader, scope.requestId);
    res.on("close", answered);
    if (scope.admitted) next();
    else drain.refuse(res);
  };
}
