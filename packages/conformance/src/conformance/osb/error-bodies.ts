/**
 * What is wrong with a broker's error answers (4xx, 5xx), judged over every call of the run:
 * the fields of a JSON error body (a MUST of OSB 2.17, "Service Broker Errors") and the body's
 * media type (a SHOULD, "Content Type").
 */
import type { BrokerResult } from "./client.js";

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";

function isError(result: BrokerResult): boolean {
  return (result.answer?.status ?? 0) >= 400;
}

/** An error body that is a JSON object with an `error` or `description` that is not a non-empty string. */
export function errorFieldsProblem(result: BrokerResult): string | undefined {
  if (!isError(result)) return undefined;
  const json = result.answer?.json;
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined;
  const status = result.answer?.status ?? 0;
  const { error, description } = json as { error?: unknown; description?: unknown };
  if (error !== undefined && !nonEmpty(error)) return `answered ${status} with an \`error\` that is not a non-empty string`;
  if (description !== undefined && !nonEmpty(description)) return `answered ${status} with a \`description\` that is not a non-empty string`;
  return undefined;
}

/** An error answer with a body that is not a JSON object, or not sent as application/json. */
export function errorMediaProblem(result: BrokerResult): string | undefined {
  if (!isError(result)) return undefined;
  const body = result.exchange.response?.body ?? "";
  if (body.trim() === "") return undefined;
  const status = result.answer?.status ?? 0;
  const contentType = result.exchange.response?.contentType;
  const json = result.answer?.json;
  if (json === null || typeof json !== "object" || Array.isArray(json)) {
    return `answered ${status} with a body that is not a JSON object (Content-Type ${contentType ?? "none"})`;
  }
  if (!/^application\/json\b/i.test(contentType ?? "")) return `answered ${status} with a JSON body sent as Content-Type ${contentType ?? "none"}, not application/json`;
  return undefined;
}
