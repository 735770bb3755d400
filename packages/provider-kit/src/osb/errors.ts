/**
 * OSB's error answers: `{ error, description }` with the spec's codes (AsyncRequired,
 * ConcurrencyError, RequiresApp) where it names one, a camel-case word for the status otherwise.
 * The registry's own refusals are translated: a lock another call holds, or an instance still
 * being provisioned, is OSB's ConcurrencyError (422).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { NotReadyError, ProviderError } from "../errors.js";
import { sendJson } from "../http/answer.js";
import type { Next } from "../http/router.js";
import { scopeOf } from "../http/scope.js";
import { LockTimeoutError } from "../lifecycle/store.js";

/** An answer the OSB layer chooses itself: its status, its code (when the spec names one) and what to tell the user. */
export class OsbError extends ProviderError {
  constructor(
    status: number,
    readonly code: string | undefined,
    description: string,
  ) {
    super(description, status);
  }
}

export const asyncRequired = (what: string) =>
  new OsbError(422, "AsyncRequired", `${what} finishes in the background: send the request again with accepts_incomplete=true and poll last_operation.`);

export const concurrencyError = (description: string) => new OsbError(422, "ConcurrencyError", description);

export const badRequest = (description: string) => new OsbError(400, "BadRequest", description);

const CODE_OF_STATUS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  404: "NotFound",
  409: "Conflict",
  410: "Gone",
  412: "PreconditionFailed",
  413: "PayloadTooLarge",
  415: "UnsupportedMediaType",
  422: "UnprocessableEntity",
  503: "ServiceUnavailable",
};

interface Answer {
  status: number;
  body: { error?: string; description: string };
}

function answerFor(error: unknown, requestId: string): Answer {
  if (error instanceof OsbError) return { status: error.status, body: { error: error.code, description: error.message } };
  if (error instanceof LockTimeoutError || error instanceof NotReadyError) {
    return { status: 422, body: { error: "ConcurrencyError", description: error.message } };
  }
  if (error instanceof ProviderError && Number.isInteger(error.status) && error.status >= 400 && error.status <= 599) {
    return { status: error.status, body: { error: CODE_OF_STATUS[error.status] ?? "InternalError", description: error.message } };
  }
  if (error instanceof URIError) return { status: 400, body: { error: "BadRequest", description: "The request path is not valid percent-encoding." } };
  return {
    status: 500,
    body: {
      error: "InternalError",
      description: `The broker failed to handle this call (request id ${requestId}). Its operator can find the details in the broker's log.`,
    },
  };
}

/** The 401's body under `/v2` (see http/auth.ts). */
export const osbUnauthorized = (description: string) => ({ error: "Unauthorized", description });

/** A path or method under `/v2` that no OSB call serves. */
export function osbNotFound(req: IncomingMessage, res: ServerResponse): void {
  const scope = scopeOf(req);
  const description = `This broker has no route for ${req.method} ${scope.path} (OSB 2.17 calls are under /v2/catalog and /v2/service_instances).`;
  scope.reason = description;
  sendJson(res, 404, { error: "NotFound", description });
}

/** Answers `error` as OSB does; once the answer has begun, `next` gets it (as the native error answer does). */
export function osbErrorAnswer(error: unknown, req: IncomingMessage, res: ServerResponse, next: Next): void {
  if (res.headersSent) return next(error);
  const scope = scopeOf(req);
  const { status, body } = answerFor(error, scope.requestId);
  // Failures are logged with their error; refusals (4xx) with their description only.
  if (status >= 500) scope.error = error;
  else scope.reason = body.description;
  sendJson(res, status, body);
}
