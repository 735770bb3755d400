/**
 * Runs a request schema and turns the first problem into a 400 that names the field as the
 * caller sent it (`app-name` in a form, `appName` in JSON, or the path segment).
 * Custom actions name their own fields (`validateWith`).
 */
import type { z } from "zod";
import { BadRequestError } from "../errors.js";
import type { Encoding } from "../contract.js";
import { wireName } from "./fields.js";

const PATH_SEGMENTS: Record<string, string> = {
  instance: "The instance name in the path",
  job: "The job name in the path",
  host: "The hostname in the path",
};

function subject(path: readonly PropertyKey[], encoding: Encoding): string {
  const [first, ...rest] = path.map(String);
  if (first === undefined) return "The request";
  const segment = PATH_SEGMENTS[first];
  if (segment !== undefined) return segment;
  const field = [wireName(first, encoding), ...rest].join(".");
  return `Field "${field}"`;
}

/**
 * Runs `schema` on `input`; the first problem answers 400, `subject` naming where it was and
 * `separator` joining that to zod's message.
 */
export function validateWith<T>(schema: z.ZodType<T>, input: unknown, subject: (path: readonly PropertyKey[]) => string, separator = " "): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  if (issue === undefined) throw new BadRequestError("The request is invalid.");
  throw new BadRequestError(`${subject(issue.path)}${separator}${issue.message}`);
}

/** The contract's schemas, whose messages are predicates (`is required.`) for the field name. */
export function validate<T>(schema: z.ZodType<T>, input: unknown, encoding: Encoding): T {
  return validateWith(schema, input, (path) => subject(path, encoding));
}
