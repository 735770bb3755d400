/**
 * Reads the body once, by Content-Type, into the canonical fields on the request scope:
 * form (the platform's default) or JSON (services registered with `encoding: json`).
 * DELETE bodies are read too. A call without a body is fine whatever its Content-Type;
 * a body of any other type answers 415, one over the limit 413.
 *
 * Read by hand rather than with body-parser: the platform sends small UTF-8 bodies without
 * Content-Encoding, and this reader costs a fraction of body-parser's on every bind.
 */
import { parse as parseForm } from "node:querystring";
import type { IncomingMessage } from "node:http";
import type { RequestHandler, Response } from "express";
import { BadRequestError, ProviderError } from "../errors.js";
import { formFields, jsonFields, type Fields } from "./fields.js";
import { scopeOf } from "./scope.js";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

function hasBody(req: IncomingMessage): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

/** `application/json; charset=utf-8` → media type and charset, lower-cased. */
function contentType(req: IncomingMessage): { media: string; charset: string | undefined } {
  const header = (req.headers["content-type"] ?? "").toLowerCase();
  const end = header.indexOf(";");
  if (end === -1) return { media: header.trim(), charset: undefined };
  const charset = /charset\s*=\s*"?([^";\s]+)/.exec(header.slice(end))?.[1];
  return { media: header.slice(0, end).trim(), charset };
}

function unsupported(what: string): ProviderError {
  return new ProviderError(`${what}: send the body as ${FORM} or ${JSON_TYPE}, in UTF-8, without Content-Encoding.`, 415);
}

function tooLarge(limitBytes: number, res: Response): ProviderError {
  // The rest of the body is not read: close the connection after answering.
  res.setHeader("Connection", "close");
  return new ProviderError(`The request body is larger than this provider's limit of ${limitBytes} bytes.`, 413);
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequestError("The request body is not valid JSON (expected a JSON object of fields).");
  }
}

const NORMALISE = new Map<string, (text: string) => Fields>([
  // maxKeys 0: no silent truncation; the byte limit bounds the work.
  [FORM, (text) => formFields(parseForm(text, undefined, undefined, { maxKeys: 0 }))],
  [JSON_TYPE, (text) => jsonFields(parseJson(text))],
]);

export function bodyParsing(limitBytes: number): RequestHandler {
  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const { media, charset } = contentType(req);
    const normalise = NORMALISE.get(media);
    if (normalise === undefined) {
      return next(unsupported(`Unsupported Content-Type "${media === "" ? "(none)" : media.slice(0, 100)}"`));
    }
    if (charset !== undefined && charset !== "utf-8" && charset !== "utf8") return next(unsupported(`Unsupported charset "${charset.slice(0, 40)}"`));
    const encoding = req.headers["content-encoding"];
    if (encoding !== undefined && encoding !== "identity") return next(unsupported(`Unsupported Content-Encoding "${encoding.slice(0, 40)}"`));
    if (Number(req.headers["content-length"]) > limitBytes) return next(tooLarge(limitBytes, res));

    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error?: unknown) => {
      if (settled) return;
      settled = true;
      req.off("data", onData);
      next(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) return finish(tooLarge(limitBytes, res));
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => {
      if (settled) return;
      const scope = scopeOf(req);
      scope.encoding = media === JSON_TYPE ? "json" : "form";
      try {
        scope.fields = normalise(Buffer.concat(chunks, size).toString("utf8"));
      } catch (invalid) {
        return finish(invalid);
      }
      finish();
    });
    // The caller went away mid-body (Node reports it as an 'aborted' error).
    req.on("error", () => finish(new BadRequestError("The request body was incomplete.")));
  };
}
