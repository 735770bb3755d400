/**
 * Every failure as one line of plain text. PlatformErrors carry their status; body-parser's
 * errors are the caller's (400, 413); its Redis being away is a 503 to retry; anything else is
 * the platform's own fault: 500, with the details on the terminal only.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import { isRedisOutage } from "@provider-kit/redis-store/connection";
import { PlatformError } from "../domain/errors.js";
import { sendText } from "./handler.js";

interface ParserError {
  type?: string;
  status?: number;
}

function answerFor(error: unknown, limitBytes: number): { status: number; message: string } {
  if (error instanceof PlatformError) return { status: error.status, message: error.message.replace(/\s*\n\s*/g, " ") };
  const parser = error as ParserError;
  if (parser?.type === "entity.too.large") return { status: 413, message: `The request body is larger than the limit of ${limitBytes} bytes.` };
  if (parser?.type === "entity.parse.failed") return { status: 400, message: "The request body is not valid JSON." };
  if (typeof parser?.status === "number" && parser.status >= 400 && parser.status < 500) {
    return { status: parser.status, message: "The request body could not be read: send it again as JSON, form fields or plain text, in UTF-8." };
  }
  if (error instanceof URIError) return { status: 400, message: "The request path is not valid percent-encoding." };
  if (isRedisOutage(error)) {
    return { status: 503, message: "The platform cannot reach the Redis that holds its state right now: try again in a moment." };
  }
  return { status: 500, message: "The platform failed to handle this request: its terminal shows the details." };
}

export function apiErrorAnswer(limitBytes: number, report: (error: unknown) => void): ErrorRequestHandler {
  return (error, _req, res, next) => {
    if (res.headersSent) return next(error);
    const answer = answerFor(error, limitBytes);
    if (answer.status >= 500 && !(error instanceof PlatformError)) report(error);
    if (answer.status === 413) res.setHeader("Connection", "close");
    if (answer.status === 503) res.setHeader("Retry-After", "1");
    sendText(res, answer.status, answer.message);
  };
}

export const unknownRoute: RequestHandler = (req, res) => {
  sendText(res, 404, `The platform has no route for ${req.method} ${req.path}.`);
};
