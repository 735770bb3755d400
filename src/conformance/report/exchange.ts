/** One exchange as text lines, shared by the tree and JUnit reports. Secrets are redacted already. */
import type { Exchange } from "../types.js";

export function exchangeLines(exchange: Exchange): string[] {
  const auth = exchange.requestHeaders.Authorization ?? "none";
  const type = exchange.requestHeaders["Content-Type"];
  const lines = [`sent:     ${exchange.method} ${exchange.path} (Authorization: ${auth}; Content-Type: ${type})`];
  if (exchange.requestBody) lines.push(`          ${oneLine(exchange.requestBody)}`);
  const response = exchange.response;
  if (!response) {
    lines.push(`received: nothing: ${exchange.error ?? "no answer"}`);
    return lines;
  }
  const extras = [response.contentType, response.location && `Location: ${response.location}`].filter(Boolean);
  lines.push(`received: ${response.status}${extras.length > 0 ? ` (${extras.join("; ")})` : ""}`);
  lines.push(`          ${response.body ? oneLine(response.body) : "(empty body)"}`);
  return lines;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}
