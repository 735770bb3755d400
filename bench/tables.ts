/** What every report of the harnesses is made of: medians and quantiles, and Markdown table rows. */

/** The q-quantile (0..1) of `values`, interpolated between the two nearest. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  return sorted[low]! + (sorted[high]! - sorted[low]!) * (position - low);
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

/** One row of a Markdown table. */
export const row = (cells: ReadonlyArray<string | number>): string => `| ${cells.join(" | ")} |`;
