/**
 * The platform sends the same fields in two encodings: form (`app-name`, `eventid`,
 * `parameters.tls.enabled=true`) and, since platform 1.30, camelCase JSON (`appName`, `eventID`,
 * `parameters: {tls: {enabled: true}}`). Both are turned here into one canonical object, so the
 * schemas in `src/schemas.ts` validate a single shape whatever the encoding.
 */
import { BadRequestError } from "../errors.js";
import type { Parameters } from "../types.js";
import { FIELDS, PARAMETERS_FIELD, type Encoding, type FieldKind } from "../contract.js";

/** The canonical body: camelCase keys (`appName`, `eventId`, `poolName`), values not yet validated. */
export type Fields = Record<string, unknown>;

const PARAMETERS_PREFIX = `${PARAMETERS_FIELD}.`;

interface Field {
  canonical: string;
  kind: FieldKind;
}

function indexBy(encoding: Encoding): ReadonlyMap<string, Field> {
  return new Map(FIELDS.flatMap(({ canonical, kind, ...names }) => names[encoding].map((wire) => [wire, { canonical, kind }] as const)));
}
const CANONICAL: Record<Encoding, ReadonlyMap<string, Field>> = { form: indexBy("form"), json: indexBy("json") };

/**
 * The platform's conventions, applied once here so the schemas stay simple: empty text means
 * absent (`plan=`), and a list field is always an array (one key, repeated keys, or a JSON list),
 * without empty entries.
 */
function setField(fields: Fields, field: Field, value: unknown): void {
  if (field.kind === "list") {
    const items = Array.isArray(value) ? value : [value];
    fields[field.canonical] = items.filter((item) => item !== "");
  } else if (value !== "") {
    fields[field.canonical] = value;
  }
}

/** How the caller spelled a canonical field, for error messages the operator can act on. */
export function wireName(canonical: string, encoding: Encoding): string {
  const field = FIELDS.find((candidate) => candidate.canonical === canonical);
  return field === undefined ? canonical : field[encoding].join(" / ");
}

/** Keys that would reach Object.prototype when nesting parameters. */
const FORBIDDEN_KEYS = new Set(["__proto__", "constructor", "prototype"]);

/**
 * Deepest nesting of `parameters` (`parameters.a.b.c` is 3 levels), in both encodings: real
 * parameters use two or three, and every later stage (validation, the registry's copies) walks
 * the tree recursively, so an unbounded depth would cost the stack rather than a clear answer.
 */
export const PARAMETER_DEPTH_LIMIT = 32;

/** A field path as echoed in an error: a caller's mistake may be a megabyte long. */
function shown(path: string): string {
  return path.length > 100 ? `${path.slice(0, 100)}…` : path;
}

function badParameter(path: string, why: string): BadRequestError {
  return new BadRequestError(`Invalid field "parameters.${shown(path)}": ${why}`);
}

function tooDeep(path: string): BadRequestError {
  return badParameter(path, `parameters may be nested at most ${PARAMETER_DEPTH_LIMIT} levels deep.`);
}

function checkKey(key: string, path: string): void {
  if (key === "" || FORBIDDEN_KEYS.has(key)) throw badParameter(path, `"${key}" is not an allowed parameter name.`);
}

/** `parameters.tls.enabled=true` → `{ tls: { enabled: "true" } }`. */
function setNested(target: Parameters, path: string, value: string | string[]): void {
  const keys = path.split(".", PARAMETER_DEPTH_LIMIT + 1);
  if (keys.length > PARAMETER_DEPTH_LIMIT) throw tooDeep(path);
  const last = keys.pop() as string;
  let node = target;
  for (const key of keys) {
    checkKey(key, path);
    const child = node[key];
    if (child === undefined) node = node[key] = {};
    else if (typeof child === "object" && !Array.isArray(child)) node = child;
    else throw badParameter(path, `"${key}" is given both as a value and as a group.`);
  }
  checkKey(last, path);
  if (node[last] !== undefined) throw badParameter(path, "given both as a value and as a group.");
  node[last] = value;
}

/** Form values are strings, or arrays for repeated keys. */
function formFields(body: Record<string, unknown>): Fields {
  const fields: Fields = {};
  let parameters: Parameters | undefined;
  for (const key of Object.keys(body)) {
    const value = body[key];
    if (key.startsWith(PARAMETERS_PREFIX)) {
      if (typeof value !== "string" && !isStringArray(value)) throw badParameter(key.slice(PARAMETERS_PREFIX.length), "must be text.");
      setNested((parameters ??= {}), key.slice(PARAMETERS_PREFIX.length), value);
      continue;
    }
    const field = CANONICAL.form.get(key);
    if (field !== undefined) setField(fields, field, value);
  }
  if (parameters !== undefined) fields.parameters = parameters;
  return fields;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

function scalarText(value: unknown): string | undefined {
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

/** JSON parameter values become text, as the form encoding would send them. */
function jsonParameters(value: unknown, path: string, depth = 1): Parameters {
  if (depth > PARAMETER_DEPTH_LIMIT) throw tooDeep(path.slice(1));
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new BadRequestError(`Invalid field "parameters${shown(path)}": expected an object.`);
  }
  const result: Parameters = {};
  for (const [key, item] of Object.entries(value)) {
    const itemPath = `${path}.${key}`;
    checkKey(key, itemPath.slice(1));
    if (item === null || item === undefined) continue;
    const text = scalarText(item);
    if (text !== undefined) result[key] = text;
    else if (Array.isArray(item)) {
      result[key] = item.map((element) => {
        const elementText = scalarText(element);
        if (elementText === undefined) throw badParameter(itemPath.slice(1), "lists may only hold plain values.");
        return elementText;
      });
    } else result[key] = jsonParameters(item, itemPath, depth + 1);
  }
  return result;
}

const NO_FIELDS: Fields = Object.freeze({});

/** The canonical fields of a body as the body middleware read it (undefined: the call had none). */
export function fieldsOf(body: unknown, encoding: Encoding): Fields {
  if (body === undefined) return NO_FIELDS;
  return encoding === "form" ? formFields(body as Record<string, unknown>) : jsonFields(body);
}

/** JSON scalars become text (the platform's values are text in the form encoding); null means absent. */
function jsonFields(body: unknown): Fields {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequestError("The JSON body must be an object of fields.");
  }
  const fields: Fields = {};
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    if (key === "parameters") {
      fields.parameters = jsonParameters(value, "");
      continue;
    }
    const field = CANONICAL.json.get(key);
    if (field === undefined) continue;
    const text = scalarText(value);
    setField(fields, field, text ?? (Array.isArray(value) ? value.map((item: unknown) => scalarText(item) ?? item) : value));
  }
  return fields;
}
