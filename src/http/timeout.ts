/**
 * Bounds a handler call: past the timeout the call answers 500 and the handler's signal aborts,
 * so a handler that honours `ctx.signal` stops its work too.
 */
import { ProviderError } from "../errors.js";

/** The handler's AbortSignal, created only if the handler reads it (most never do). */
export class LazyAbort {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}

export function withTimeout<T>(timeoutMs: number, abort: LazyAbort, requestId: string, work: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      const error = new ProviderError(
        `The provider did not finish this call within ${timeoutMs / 1000} s and gave up (request id ${requestId}). ` +
          "Try again later; if it keeps happening, check the provider's log.",
        500,
      );
      abort.abort(error);
      reject(error);
    }, timeoutMs);
    let running: Promise<T>;
    try {
      running = work();
    } catch (error) {
      clearTimeout(timer);
      reject(error);
      return;
    }
    running.then(
      (result) => {
        clearTimeout(timer);
        resolve(result);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
