/**
 * What the platform accepts as the body of each answer. Each function returns the problem
 * in words, or undefined when the body is fine. Messages never quote bind result values.
 */
import { STATUS_CODES } from "node:http";

/** The JSON name of a value's type, for messages: "string", "number", "array", "null"... */
export function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

type Parsed = { ok: true; value: unknown } | { ok: false; problem: string };

function parseJson(body: string): Parsed {
  if (body.trim() === "") return { ok: false, problem: "the body is empty" };
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false, problem: "the body is not JSON" };
  }
}

/** `null` or an object; with `stringsOnly`, every value a string. */
export function bindResultProblem(body: string, stringsOnly: boolean): string | undefined {
  const parsed = parseJson(body);
  if (!parsed.ok) return `${parsed.problem}: answer a JSON object of environment variables, or null`;
  const value = parsed.value;
  if (value === null) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) {
    return `the body is a JSON ${jsonType(value)}: answer a JSON object of environment variables, or null`;
  }
  if (!stringsOnly) return undefined;
  const notStrings = Object.entries(value).filter(([, item]) => typeof item !== "string");
  if (notStrings.length === 0) return undefined;
  const list = notStrings.map(([key, item]) => `${key} is a ${jsonType(item)}`).join(", ");
  return `${list}: send every value as a string`;
}

/** A JSON array of objects whose `fields` are all strings. */
function arrayOfRecordsProblem(body: string, what: string, fields: readonly string[]): string | undefined {
  const parsed = parseJson(body);
  if (!parsed.ok) return `${parsed.problem}: answer a JSON array of ${what}`;
  if (!Array.isArray(parsed.value)) return `the body is a JSON ${jsonType(parsed.value)}, not an array of ${what}`;
  for (const [index, item] of parsed.value.entries()) {
    if (item === null || typeof item !== "object" || Array.isArray(item)) {
      return `item ${index} is a JSON ${jsonType(item)}, not an object with ${fields.join(" and ")}`;
    }
    for (const field of fields) {
      const value = (item as Record<string, unknown>)[field];
      if (typeof value !== "string") return `item ${index}: "${field}" is ${value === undefined ? "missing" : `a ${jsonType(value)}`}, expected a string`;
    }
  }
  return undefined;
}

export const plansProblem = (body: string) => arrayOfRecordsProblem(body, "plans", ["name", "description"]);
export const infoProblem = (body: string) => arrayOfRecordsProblem(body, "info items", ["label", "value"]);

/** The plans' names, when the body is a valid plan list; none otherwise. */
export function planNames(body: string): string[] {
  if (plansProblem(body) !== undefined) return [];
  return (JSON.parse(body) as Array<{ name: string }>).map((plan) => plan.name);
}

export const isJson = (body: string): boolean => parseJson(body).ok;

/** `application/json`, `application/problem+json`..., with or without parameters. */
export function isJsonContentType(contentType: string): boolean {
  return /^application\/([\w.-]+\+)?json\s*(;|$)/i.test(contentType);
}

/** A markup page rather than a message: starts with a tag. */
function htmlPage(text: string): boolean {
  return /^<(!doctype|[a-z][\w-]*)[\s>/]/i.test(text);
}

/** "Internal Server Error", "500 Internal Server Error", "Bad Request.": a status line a framework wrote. */
function bareReasonPhrase(text: string): boolean {
  const phrase = text.replace(/^\d{3}\s+/, "").replace(/\.$/, "").toLowerCase();
  return Object.values(STATUS_CODES).some((reason) => reason?.toLowerCase() === phrase);
}

/** How much of a page's title to quote. */
const TITLE_AT = 80;

function describeHtml(body: string, contentType: string): string {
  const title = /<title>([^<]*)<\/title>/i.exec(body)?.[1]?.trim() ?? /<h1>([^<]*)<\/h1>/i.exec(body)?.[1]?.trim();
  const quoted = title ? ` titled "${title.slice(0, TITLE_AT)}"` : "";
  return `an HTML page${quoted} (${contentType || "no content type"}, ${body.length} characters)`;
}

/**
 * Why an error body explains nothing to the platform's user (who sees it verbatim), in words
 * saying what was received; undefined when it is an explanation. A framework's default page or
 * status text is not one.
 */
export function explanationProblem(body: string, contentType: string): string | undefined {
  const text = body.trim();
  if (text === "") return "an empty body";
  if (htmlPage(text)) return describeHtml(text, contentType);
  if (bareReasonPhrase(text)) return `only the status text "${text}", a framework's default`;
  return undefined;
}

/** Error bodies longer than this are not the short message the platform's user should see. */
const MAX_ERROR_TEXT = 1000;

/** Why an error body is not a short human message (HTML, JSON, too long); undefined when it is one. */
export function errorTextProblem(body: string, contentType: string): string | undefined {
  const text = body.trim();
  if (htmlPage(text)) return describeHtml(text, contentType);
  const parsed = parseJson(text);
  if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) return `a JSON ${jsonType(parsed.value)} (${text.length} characters)`;
  if (text.length > MAX_ERROR_TEXT) return `${text.length} characters of text`;
  return undefined;
}
