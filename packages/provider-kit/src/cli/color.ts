/**
 * Whether a command colours what it writes to `stream`. `FORCE_COLOR` wins (any value but "0" or
 * "false" turns colour on, as in Node itself), then `NO_COLOR` (any non-empty value turns it off,
 * no-color.org), then whether the stream is a terminal that shows colours.
 */
export function colorOn(stream: { isTTY?: boolean; hasColors?: () => boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  const forced = env.FORCE_COLOR;
  if (forced !== undefined) return forced !== "0" && forced !== "false";
  if (env.NO_COLOR) return false;
  return stream.isTTY === true && stream.hasColors?.() !== false;
}
