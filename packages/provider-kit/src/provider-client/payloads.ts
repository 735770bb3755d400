/**
 * Request bodies the way the platform encodes them. A payload is written once, with the
 * form field names; `encodePayload` turns it into the form body (repeated keys, flattened
 * `parameters.*`) or into the camelCase JSON object platform 1.30+ sends.
 */
import { jsonName, PARAMETERS_FIELD, type Encoding } from "../contract.js";

export type ParameterTree = { [key: string]: string | ParameterTree };

export interface Payload {
  /** Form field name -> value; an array is sent as a repeated key (`tags=a&tags=b`). */
  fields: Record<string, string | string[]>;
  /** Fields the platform sends in the form encoding only (`app-host`: JSON has `appHosts` alone). */
  formOnlyFields?: Record<string, string>;
  parameters?: ParameterTree;
  /** Calls that only ever existed before JSON encoding (unit binds) stay form encoded. */
  formOnly?: boolean;
}

export const FORM_CONTENT_TYPE = "application/x-www-form-urlencoded";
const JSON_CONTENT_TYPE = "application/json";

export function encodePayload(payload: Payload, encoding: Encoding): { contentType: string; body: string } {
  if (encoding === "json" && !payload.formOnly) {
    return { contentType: JSON_CONTENT_TYPE, body: JSON.stringify(toJson(payload)) };
  }
  return { contentType: FORM_CONTENT_TYPE, body: toForm(payload) };
}

function toForm(payload: Payload): string {
  const form = new URLSearchParams();
  for (const [key, value] of Object.entries({ ...payload.fields, ...payload.formOnlyFields })) {
    for (const item of typeof value === "string" ? [value] : value) form.append(key, item);
  }
  for (const [key, value] of flatten(payload.parameters ?? {}, PARAMETERS_FIELD)) form.append(key, value);
  return form.toString();
}

function flatten(tree: ParameterTree, prefix: string): Array<[string, string]> {
  return Object.entries(tree).flatMap(([key, value]): Array<[string, string]> =>
    typeof value === "string" ? [[`${prefix}.${key}`, value]] : flatten(value, `${prefix}.${key}`),
  );
}

function toJson(payload: Payload): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(payload.fields)) body[jsonName(key)] = value;
  if (payload.parameters) body[PARAMETERS_FIELD] = payload.parameters;
  return body;
}
