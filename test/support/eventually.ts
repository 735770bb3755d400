/**
 * Waiting for a condition in tests and their support code (free of vitest, so bench/ can use it).
 */

/** Polls `probe` until it returns something other than undefined; fails after `timeoutMs`. */
export async function eventually<T>(probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`, { cause: lastError });
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
