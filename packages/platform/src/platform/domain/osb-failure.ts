/**
 * A broker's failure in the words the real platform gave it: its broker client (service/broker.go)
 * returned the OSB client's error as it was, which for an answer is go-open-service-broker-client's
 * `HTTPStatusCodeError` (`handleFailureResponse`: the body's `error` and `description` when the
 * body is a JSON object, else the decoding error), made printable: users read it on a terminal.
 */
import { printable, redactSecrets, type CallResult } from "provider-kit/contract";

/** `Status: 501; ErrorMessage: <nil>; Description: <nil>; ResponseError: unexpected end of JSON input`, or why no answer came. */
export function osbFailure(result: CallResult, url: string): string {
  if (!result.answer) return printable(`${result.exchange.method} ${url}${result.exchange.path.split("?")[0]}: ${result.error ?? "no answer"}`);
  const { status, body } = result.answer;
  const { fields, decodingError } = decoded(body);
  const text = (name: string) => (typeof fields[name] === "string" ? (fields[name]) : "<nil>");
  // The body was redacted as it came; its fields are redacted again as decoded (a form inside a JSON string comes out escaped once more).
  return printable(redactSecrets(`Status: ${status}; ErrorMessage: ${text("error")}; Description: ${text("description")}; ResponseError: ${decodingError ?? "<nil>"}`, result.secrets));
}

/** The body as Go's json.Unmarshal into a map reads it, with Go's words when it cannot. */
function decoded(body: string): { fields: Record<string, unknown>; decodingError?: string } {
  const trimmed = body.trim();
  if (trimmed === "") return { fields: {}, decodingError: "unexpected end of JSON input" };
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return { fields: {}, decodingError: `invalid character '${trimmed[0]}' looking for beginning of value` };
  }
  if (parsed === null) return { fields: {} };
  if (typeof parsed !== "object" || Array.isArray(parsed)) {
    const kind = Array.isArray(parsed) ? "array" : typeof parsed === "boolean" ? "bool" : typeof parsed;
    return { fields: {}, decodingError: `json: cannot unmarshal ${kind} into Go value of type map[string]interface {}` };
  }
  return { fields: parsed as Record<string, unknown> };
}
