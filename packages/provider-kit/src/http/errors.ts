/**
 * Turns whatever went wrong into the short plain-text answer the platform shows its user.
 * ProviderErrors carry their status and a message meant for that user. Anything else is a bug
 * or an outage: a generic 500 naming the request id, with the details in the log line only.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { ProviderError } from "../errors.js";
import { sendText } from "./answer.js";
import type { Next } from "./router.js";
import { scopeOf, type RequestScopes } from "./scope.js";

interface Answer {
  status: number;
  message: string;
}

function answerFor(error: unknown, requestId: string): Answer {
  if (error instanceof ProviderError && Number.isInteger(error.status) && error.status >= 400 && error.status <= 599) {
    return { status: error.status, message: error.message };
  }
  // The router could not percent-decode a path segment (`/resources/%ZZ`).
  if (error instanceof URIError) return { status: 400, message: "The request path is not valid percent-encoding." };
  return {
    status: 500,
    message: `The provider failed to handle this call (request id ${requestId}). Its operator can find the details in the provider's log.`,
  };
}

/** Answers `error`; once the answer has begun, `next` gets it (to drop the connection). */
export function errorAnswer(error: unknown, req: IncomingMessage, res: ServerResponse, next: Next): void {
  if (res.headersSent) return next(error);
  const scope = scopeOf(req);
  const answer = answerFor(error, scope.requestId);
  // Failures are logged with their error; refusals (4xx) with their message only.
  if (answer.status >= 500) scope.error = error;
  else scope.reason = answer.message;
  sendText(res, answer.status, answer.message);
}

/** Unknown paths and methods: 404 (never 405, which the platform reads as an error). */
export function notFound(req: IncomingMessage, res: ServerResponse): void {
  const scope = scopeOf(req);
  const message = `This provider has no route for ${req.method} ${scope.path}.`;
  scope.reason = message;
  sendText(res, 404, message);
}

/**
 * A request none of a router's routes took: behind auth (a stranger learns no route), `notFoundAnswer`
 * (the provider's, or OSB's under /v2).
 */
export function answerUnrouted(
  scopes: RequestScopes,
  auth: RequestHandler | undefined,
  notFoundAnswer: (req: IncomingMessage, res: ServerResponse) => void,
  req: Request,
  res: Response,
): void {
  if (!scopes.open(req, res)) return;
  if (auth === undefined) notFoundAnswer(req, res);
  else auth(req, res, () => notFoundAnswer(req, res));
}

/** An error that reached the end of a router, answered with `answer`; an undecodable path fails before any route's guard opened the scope. */
export function answerLastError(scopes: RequestScopes, answer: typeof errorAnswer, error: unknown, req: Request, res: Response): void {
  if (scopes.open(req, res)) answer(error, req, res, () => req.socket.destroy());
}
