/** The report as JSON, for tools. Secrets are redacted at the source (see platform-client.ts). */
import type { ConformanceReport } from "../types.js";

export function formatJson(report: ConformanceReport): string {
  return `${JSON.stringify(report, null, 2)}\n`;
}
