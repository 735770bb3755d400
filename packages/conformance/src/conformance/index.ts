/**
 * provider-kit/conformance: plays the platform against any provider over HTTP and reports,
 * check by check, whether it answers as the platform expects.
 *
 *   const report = await runConformance({ url, username, password });
 *   expect(report.results.filter((r) => r.outcome === "fail")).toEqual([]);
 */
export { runConformance, ConformanceUsageError } from "./run.js";
export { CredentialsRefusedError, ProviderUnreachableError } from "./scenario.js";
export { CHECKS, checksFor, levelIn, formatCitation } from "./checks.js";
export { OSB_CHECKS } from "./osb/checks.js";
export { runOsbConformance, type OsbConformanceOptions } from "./osb/run.js";
export { formatTree, type TreeOptions } from "./report/tree.js";
export { formatJson } from "./report/json.js";
export { formatJunit } from "./report/junit.js";
export { formatCheckTable } from "./report/catalog.js";
export * from "./types.js";
