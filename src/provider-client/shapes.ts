/**
 * What the platform accepts as the body of each answer. Each function returns the problem
 * in words, or undefined when the body is fine. Messages never quote bind result values.
 */

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

/** The first plan's name, when the body is a valid plan list. */
export function firstPlan(body: string): string | undefined {
  if (plansProblem(body) !== undefined) return undefined;
  const plans = JSON.parse(body) as Array<{ name: string }>;
  return plans[0]?.name;
}
