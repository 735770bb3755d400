/**
 * Reads the body once, by Content-Type, into the canonical fields on the request scope:
 * form (the platform's default) or JSON (services registered with `encoding: json`).
 * DELETE bodies are read too. A call without a body is fine whatever its Content-Type;
 * a body of any other type answers 415, one over the limit 413.
 */
import bodyParser from "body-parser";
import type { IncomingMessage } from "node:http";
import type { RequestHandler } from "express";
import { ProviderError } from "../errors.js";
import { formFields, jsonFields, type Fields } from "./fields.js";
import { scopeOf } from "./scope.js";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

function mediaType(req: IncomingMessage): string {
  const header = req.headers["content-type"] ?? "";
  const end = header.indexOf(";");
  return (end === -1 ? header : header.slice(0, end)).trim().toLowerCase();
}

export function bodyParsing(limitBytes: number): RequestHandler {
  const readForm = bodyParser.urlencoded({ limit: limitBytes, extended: false, type: FORM, parameterLimit: 10_000 });
  const readJson = bodyParser.json({ limit: limitBytes, type: JSON_TYPE });

  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const type = mediaType(req);
    const scope = scopeOf(req);
    // Normalising throws BadRequestError on malformed fields; it runs in body-parser's callback.
    const whenRead = (normalise: (body: unknown) => Fields) => (error?: unknown) => {
      if (error !== undefined) return next(error);
      try {
        scope.fields = normalise(req.body ?? {});
      } catch (invalid) {
        return next(invalid);
      }
      next();
    };
    if (type === FORM) {
      readForm(req, res, whenRead((body) => formFields(body as Record<string, unknown>)));
    } else if (type === JSON_TYPE) {
      scope.encoding = "json";
      readJson(req, res, whenRead(jsonFields));
    } else {
      const shown = type === "" ? "(none)" : type.slice(0, 100);
      next(new ProviderError(`Unsupported Content-Type "${shown}": send the body as ${FORM} or ${JSON_TYPE}.`, 415));
    }
  };
}
