/**
 * Form bodies. The platform sends plain forms (`app-name=web&app-hosts=a&app-hosts=b`, keys
 * without brackets) with `Content-Type: application/x-www-form-urlencoded` and a Content-Length:
 * those are read here in one pass. Everything else (chunked, compressed, another spelling of the
 * Content-Type, over the byte limit, bracketed or prototype-named keys) goes through body-parser's
 * urlencoded reader as before. Both give the same fields and the same errors, byte for byte:
 * test/http/form.test.ts compares them on a table of bodies, test/http the answers.
 *
 * What is reproduced of body-parser (`urlencoded({ extended: false })`: raw-body, iconv-lite, qs):
 * the body is decoded as UTF-8 with a leading byte order mark dropped; a body that ends before its
 * Content-Length (the caller went away) fails as `request.aborted`; more `&`-separated fields than
 * the limit fail as `parameters.too.many`; repeated keys become arrays in order; `+` is a space;
 * a malformed percent-escape leaves its whole key or value undecoded; keys that are empty are
 * dropped.
 */
import bodyParser from "body-parser";
import type { IncomingMessage, ServerResponse } from "node:http";
import { parse as parseQuery } from "qs";

const FORM = "application/x-www-form-urlencoded";

/** The limits every body is read within, form or JSON (body.ts). */
export interface BodyLimits {
  /** Largest body, in bytes. */
  bytes: number;
  /** Most `&`-separated fields in a form body. */
  formFields: number;
}

/** A failure, spelled as body-parser's errors are (`status`, `type`): body.ts explains both alike. */
export interface ReadFailure {
  status: number;
  type: string;
}

export type FormBody = Record<string, unknown>;
type Parse = (req: IncomingMessage, res: ServerResponse, done: (error?: unknown) => void) => void;

/** Reads a form into `req.body`, as body-parser's urlencoded reader does. */
export function formReader(limits: BodyLimits): Parse {
  const viaBodyParser = bodyParser.urlencoded({ extended: false, limit: limits.bytes, type: FORM, parameterLimit: limits.formFields });
  return (req, res, done) => {
    const length = plainLength(req, limits.bytes);
    if (length === undefined) return viaBodyParser(req, res, done);
    readText(req, length, (failure, text) => {
      if (failure !== undefined) return done(failure);
      const parsed = parseForm(text, limits.formFields);
      if ("status" in parsed) return done(parsed);
      (req as IncomingMessage & { body?: unknown }).body = parsed.body;
      done();
    });
  };
}

/**
 * The Content-Length of a request read here: the exact Content-Type the platform sends, no
 * Content-Encoding or Transfer-Encoding, a length within the limit, the request still unread.
 * Undefined for any other: body-parser reads it.
 */
function plainLength(req: IncomingMessage, limit: number): number | undefined {
  const { headers } = req;
  if (headers["content-type"] !== FORM || headers["content-encoding"] !== undefined || headers["transfer-encoding"] !== undefined) {
    return undefined;
  }
  const length = Number(headers["content-length"]);
  if (!(length > 0 && length <= limit)) return undefined;
  // What body-parser takes for an already finished request (on-finished's isFinished).
  const { socket, upgrade } = req as IncomingMessage & { socket: IncomingMessage["socket"] | null; upgrade?: boolean };
  if (upgrade || socket === null || !socket.readable || (req.complete && !req.readable)) return undefined;
  return length;
}

/** The body as UTF-8 text, or why it could not be read. */
function readText(req: IncomingMessage, length: number, done: (failure: ReadFailure | undefined, text: string) => void): void {
  const chunks: Buffer[] = [];
  let received = 0;
  const onData = (chunk: Buffer) => {
    received += chunk.length;
    chunks.push(chunk);
  };
  const finish = (failure: ReadFailure | undefined) => {
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onAborted);
    req.off("close", onClose);
    if (failure !== undefined) return done(failure, "");
    const text = (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received)).toString("utf8");
    done(undefined, text.charCodeAt(0) === 0xfeff ? text.slice(1) : text); // iconv-lite drops the BOM
  };
  const onEnd = () => finish(received === length ? undefined : { status: 400, type: "request.size.invalid" });
  const onAborted = () => finish({ status: 400, type: "request.aborted" });
  const onClose = () => {
    if (!req.complete) onAborted();
  };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onAborted);
  req.on("close", onClose);
}

/** Brackets make qs build nested keys (`%5B`/`%5D` are brackets to it too). */
const BRACKETS = /[[\]]|%5[bd]/i;
const { hasOwnProperty } = Object.prototype;

/** The form's fields as qs parses them for body-parser, or the failure it answers. */
export function parseForm(text: string, fieldLimit: number): { body: FormBody } | ReadFailure {
  if (text === "") return { body: {} };
  let fields = 1;
  for (let at = text.indexOf("&"); at !== -1; at = text.indexOf("&", at + 1)) {
    if (++fields > fieldLimit) return { status: 413, type: "parameters.too.many" };
  }
  const plain = plainFields(text);
  if (plain !== undefined) return { body: plain };
  try {
    // body-parser's own call for `extended: false`.
    return {
      body: parseQuery(text, {
        allowPrototypes: true,
        arrayLimit: fields,
        depth: 0,
        charset: "utf-8",
        parameterLimit: fieldLimit,
        strictDepth: true,
      }),
    };
  } catch (error) {
    return { status: 400, type: error instanceof RangeError ? "querystring.parse.rangeError" : "entity.parse.failed" };
  }
}

/**
 * A form's fields in one pass, as qs gives them; undefined for the forms whose keys qs treats
 * specially: brackets (nesting), `__proto__` and the names of Object.prototype's members.
 */
export function plainFields(text: string): FormBody | undefined {
  if (BRACKETS.test(text)) return undefined;
  const fields: Record<string, string | string[]> = {};
  for (let start = 0; start <= text.length; ) {
    let end = text.indexOf("&", start);
    if (end === -1) end = text.length;
    let equals = text.indexOf("=", start);
    if (equals === -1 || equals > end) equals = end;
    const key = decode(text.slice(start, equals));
    if (key !== "") {
      if (key === "__proto__" || hasOwnProperty.call(Object.prototype, key)) return undefined;
      const value = equals === end ? "" : decode(text.slice(equals + 1, end));
      const before = fields[key];
      if (before === undefined) fields[key] = value;
      else if (typeof before === "string") fields[key] = [before, value];
      else before.push(value);
    }
    start = end + 1;
  }
  return fields;
}

/** qs's decoder: `+` is a space, then percent-escapes; a malformed escape leaves the text as it is. */
function decode(text: string): string {
  const spaced = text.includes("+") ? text.replace(/\+/g, " ") : text;
  if (!spaced.includes("%")) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}
