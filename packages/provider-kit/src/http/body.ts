/**
 * Reads the body once, by Content-Type, onto the request scope, with body-parser's readers: form
 * (the platform's default, flat keys: `urlencoded({ extended: false })`) or JSON (services
 * registered with `encoding: json`).
 * The contract's routes read it as canonical fields (fields.ts), custom actions as it came.
 * DELETE bodies are read too. A call without a body is
 * fine whatever its Content-Type. Refused before any parsing: another media type, a charset other than UTF-8 or
 * a Content-Encoding (415); then a body over the byte limit, or a form with more fields than
 * the field limit (413). The field limit keeps form parsing linear: body-parser's parser merges
 * repeated keys in time that grows with the square of their number.
 */
import bodyParser from "body-parser";
import type { IncomingMessage, ServerResponse } from "node:http";
import { BadRequestError, ProviderError } from "../errors.js";
import type { Encoding } from "../contract.js";
import type { Middleware } from "./router.js";
import { scopeOf } from "./scope.js";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

/** The limits every body is read within, form or JSON. */
export interface BodyLimits {
  /** Largest body, in bytes. */
  bytes: number;
  /** Most `&`-separated fields in a form body. */
  formFields: number;
}

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

/** The `charset` parameter of the Content-Type, lower-cased and unquoted; undefined when absent. */
function charsetOf(req: IncomingMessage): string | undefined {
  const match = /;\s*charset\s*=\s*(?:"([^"]*)"|([^;\s]*))/i.exec(req.headers["content-type"] ?? "");
  return match === null ? undefined : (match[1] ?? match[2] ?? "").toLowerCase();
}

/** What is refused before reading a byte of the body: bodies are UTF-8, as they are sent, uncompressed. */
function refusedEncoding(req: IncomingMessage): ProviderError | undefined {
  const charset = charsetOf(req);
  // Only the registered name: body-parser refuses the `utf8` alias, and a 415 says what to send.
  if (charset !== undefined && charset !== "utf-8") {
    return unsupported(`Unsupported charset "${charset.slice(0, 40)}"`);
  }
  const coding = req.headers["content-encoding"]?.trim().toLowerCase();
  if (coding !== undefined && coding !== "" && coding !== "identity") {
    return unsupported(`Unsupported Content-Encoding "${coding.slice(0, 40)}"`);
  }
  return undefined;
}

function unsupported(what: string): ProviderError {
  return new ProviderError(`${what}: send the body uncompressed, as ${FORM} or ${JSON_TYPE}, in UTF-8.`, 415);
}

/** body-parser's errors carry `status` and `type`; say in the platform user's words what was wrong. */
interface ParserError {
  status?: number;
  type?: string;
}

function explain(error: ParserError, limits: BodyLimits, res: ServerResponse): ProviderError {
  switch (error.type) {
    case "entity.too.large":
      // The rest of the body is not read: close the connection after answering.
      res.setHeader("Connection", "close");
      return new ProviderError(`The request body is larger than this provider's limit of ${limits.bytes} bytes.`, 413);
    case "parameters.too.many":
      return new ProviderError(
        `The form has more than ${limits.formFields} fields, this provider's limit (option formFieldLimit); send fewer fields.`,
        413,
      );
    case "entity.parse.failed":
      return new BadRequestError("The request body is not valid JSON (expected a JSON object of fields).");
    default:
      return error.status !== undefined && error.status < 500
        ? new BadRequestError("The request body was incomplete or malformed; send it again.")
        : new ProviderError("The request body could not be read.");
  }
}

interface Reader {
  encoding: Encoding;
  parse: (req: IncomingMessage, res: ServerResponse, done: (error?: unknown) => void) => void;
}

export function bodyParsing(limits: BodyLimits): Middleware {
  const readers = new Map<string, Reader>([
    [
      FORM,
      {
        encoding: "form",
        // Flat keys (`parameters.tls.enabled`, repeated `tags`): fields.ts applies the platform's
        // conventions. More fields than the limit are refused (413), never dropped silently.
        parse: bodyParser.urlencoded({ extended: false, limit: limits.bytes, type: FORM, parameterLimit: limits.formFields }),
      },
    ],
    [
      JSON_TYPE,
      {
        encoding: "json",
        parse: bodyParser.json({ limit: limits.bytes, type: JSON_TYPE, strict: false }),
      },
    ],
  ]);

  return (req, res, next) => {
    if (!hasBody(req)) return next();
    const media = mediaType(req);
    const reader = readers.get(media);
    if (reader === undefined) {
      return next(unsupported(`Unsupported Content-Type "${media === "" ? "(none)" : media.slice(0, 100)}"`));
    }
    const refused = refusedEncoding(req);
    if (refused !== undefined) return next(refused);
    reader.parse(req, res, (error?: unknown) => {
      if (error) return next(explain(error, limits, res));
      const scope = scopeOf(req);
      scope.encoding = reader.encoding;
      scope.body = (req as IncomingMessage & { body?: unknown }).body;
      next();
    });
  };
}
