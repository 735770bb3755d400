/**
 * Bounds a handler call: past the timeout the call answers 500 and the handler's signal aborts,
 * so a handler that honours `ctx.signal` stops its work too.
 */
import { ProviderError } from "../errors.js";

export async function withTimeout<T>(
  timeoutMs: number,
  controller: AbortController,
  requestId: string,
  work: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new ProviderError(
        `The provider did not finish this call within ${timeoutMs / 1000} s and gave up (request id ${requestId}). ` +
          "Try again later; if it keeps happening, check the provider's log.",
        500,
      );
      controller.abort(error);
      reject(error);
    }, timeoutMs);
  });
  try {
    return await Promise.race([work(), expired]);
  } finally {
    clearTimeout(timer);
  }
}
