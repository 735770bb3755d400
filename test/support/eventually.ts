/**
 * Waiting for a condition in tests and their support code (free of vitest, so bench/ can use it).
 */

/**
 * Polls `probe` until it returns something other than undefined or false, and returns that;
 * fails after `timeoutMs`, naming `what` (default: the probe's source).
 */
export async function eventually<T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 20_000,
  what?: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`Not met within ${timeoutMs} ms: ${what ?? probe.toString()}`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
