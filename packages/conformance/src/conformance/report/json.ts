/**
 * The report as JSON, for tools. Secrets are redacted at the source (the client in provider-kit/contract); every
 * string is made printable, as in the other reports: the JSON is read on terminals too, and
 * JSON.stringify leaves C1 controls and the bidi and invisible characters as they are.
 */
import { printable } from "provider-kit/contract";
import type { ConformanceReport } from "../types.js";

export function formatJson(report: ConformanceReport): string {
  return `${JSON.stringify(report, (_key, value: unknown) => (typeof value === "string" ? printable(value, { lines: true }) : value), 2)}\n`;
}
