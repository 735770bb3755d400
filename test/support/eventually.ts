/**
 * Waiting for a condition in tests and their support code (free of vitest, so bench/ can use it).
 */

/** First pause between two probes, doubled after each miss up to the last: quick when the condition is, light on a busy machine when not. */
const FIRST_PAUSE_MS = 10;
const LONGEST_PAUSE_MS = 250;

/**
 * Polls `probe`, backing off, until it returns something other than undefined or false, and
 * returns that; fails after `timeoutMs`, naming `what` (default: the probe's source).
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  what?: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (let pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(pauseMs * 2, LONGEST_PAUSE_MS)) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`Not met within ${timeoutMs} ms: ${what ?? probe.toString()}`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
