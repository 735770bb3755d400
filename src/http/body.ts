/**
 * Reads the body once, by Content-Type, into the canonical fields on the request scope:
 * form (the platform's default) or JSON (services registered with `encoding: json`), both read by
 * body-parser. DELETE bodies are read too. A call without a body is fine whatever its
 * Content-Type; a body of any other type answers 415, one over the limit 413.
 */
import bodyParser from "body-parser";
import type { IncomingMessage } from "node:http";
import type { Request, RequestHandler, Response } from "express";
import { BadRequestError, ProviderError } from "../errors.js";
import { formFields, jsonFields, type Encoding, type Fields } from "./fields.js";
import { scopeOf } from "./scope.js";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

/** `application/json; charset=utf-8` → `application/json`, lower-cased. */
function mediaType(req: IncomingMessage): string {
  const header = (req.headers["content-type"] ?? "").toLowerCase();
  const end = header.indexOf(";");
  return (end === -1 ? header : header.slice(0, end)).trim();
}

function unsupported(what: string): ProviderError {
  return new ProviderError(`${what}: send the body as ${FORM} or ${JSON_TYPE}, in UTF-8.`, 415);
}

/** body-parser's errors carry `status` and `type`; say in the platform user's words what was wrong. */
interface ParserError {
  status?: number;
  type?: string;
  charset?: string;
}

function explain(error: ParserError, limitBytes: number, res: Response): ProviderError {
  switch (error.type) {
    case "entity.too.large":
    case "parameters.too.many":
      // The rest of the body is not read: close the connection after answering.
      res.setHeader("Connection", "close");
      return new ProviderError(`The request body is larger than this provider's limit of ${limitBytes} bytes.`, 413);
    case "entity.parse.failed":
      return new BadRequestError("The request body is not valid JSON (expected a JSON object of fields).");
    case "charset.unsupported":
      return unsupported(`Unsupported charset "${String(error.charset).slice(0, 40)}"`);
    case "encoding.unsupported":
      return unsupported("Unsupported Content-Encoding");
    default:
      return error.status !== undefined && error.status < 500
        ? new BadRequestError("The request body was incomplete or malformed; send it again.")
        : new ProviderError("The request body could not be read.");
  }
}

interface Reader {
  encoding: Encoding;
  parse: RequestHandler;
  normalise(body: unknown): Fields;
}

export function bodyParsing(limitBytes: number): RequestHandler {
  const readers = new Map<string, Reader>([
    [
      FORM,
      {
        encoding: "form",
        // Flat keys (`parameters.tls.enabled`, repeated `tags`): fields.ts applies the platform's
        // conventions. No parameter cap beyond the byte limit: nothing is dropped silently.
        parse: bodyParser.urlencoded({ extended: false, limit: limitBytes, type: FORM, parameterLimit: Infinity }),
        normalise: (body) => formFields(body as Record<string, unknown>),
      },
    ],
    [
      JSON_TYPE,
      {
        encoding: "json",
        parse: bodyParser.json({ limit: limitBytes, type: JSON_TYPE, strict: false }),
        normalise: jsonFields,
      },
    ],
  ]);

  return (req: Request, res, next) => {
    if (!hasBody(req)) return next();
    const media = mediaType(req);
    const reader = readers.get(media);
    if (reader === undefined) {
      return next(unsupported(`Unsupported Content-Type "${media === "" ? "(none)" : media.slice(0, 100)}"`));
    }
    reader.parse(req, res, (error?: unknown) => {
      if (error) return next(explain(error as ParserError, limitBytes, res));
      const scope = scopeOf(req);
      scope.encoding = reader.encoding;
      try {
        scope.fields = reader.normalise(req.body);
      } catch (invalid) {
        return next(invalid);
      }
      next();
    });
  };
}
