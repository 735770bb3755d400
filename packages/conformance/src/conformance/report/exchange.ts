/**
 * One exchange as text lines, shared by the tree and JUnit reports. Secrets are redacted already;
 * what the provider sent is made printable here (its bodies, headers and errors reach terminals).
 */
import { printable } from "provider-kit/contract";
import type { Exchange } from "../types.js";

/** How much of each body the brief form shows: enough to recognise it, short enough for one screen. */
const BRIEF_BODY = 160;

export function exchangeLines(exchange: Exchange, options: { brief?: boolean } = {}): string[] {
  return rawExchangeLines(exchange, options).map((line) => printable(line));
}

function rawExchangeLines(exchange: Exchange, options: { brief?: boolean }): string[] {
  const body = (text: string) => {
    const line = oneLine(text);
    return options.brief && line.length > BRIEF_BODY ? `${line.slice(0, BRIEF_BODY)}… (--verbose shows more)` : line;
  };
  const auth = String(exchange.requestHeaders.Authorization ?? "none");
  const type = String(exchange.requestHeaders["Content-Type"] ?? "none");
  const lines = [`sent:     ${exchange.method} ${exchange.path} (Authorization: ${auth}; Content-Type: ${type})`];
  if (exchange.requestBody) lines.push(`          ${body(exchange.requestBody)}`);
  const response = exchange.response;
  if (!response) {
    lines.push(`received: nothing: ${exchange.error ?? "no answer"}`);
    return lines;
  }
  const extras = [response.contentType, response.location && `Location: ${response.location}`].filter(Boolean);
  lines.push(`received: ${response.status}${extras.length > 0 ? ` (${extras.join("; ")})` : ""}`);
  lines.push(`          ${response.body ? body(response.body) : "(empty body)"}`);
  return lines;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}
