/** The options cannot describe a run (bad URL, unknown variant, a plan the provider does not list...). */
export class ConformanceUsageError extends Error {
  override name = "ConformanceUsageError";
}
