/**
 * Bounds a handler call: past the timeout the call answers 500 and the handler's signal aborts,
 * so a handler that honours `ctx.signal` stops its work too.
 */
import { performance } from "node:perf_hooks";
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

/** A call's work, bounded by the provider's handler timeout. */
export type Bounded = <T>(abort: LazyAbort, requestId: string, work: () => Promise<T>) => Promise<T>;

interface PendingCall {
  readonly deadline: number;
  readonly abort: LazyAbort;
  readonly requestId: string;
  readonly reject: (error: unknown) => void;
}

function timeoutError(timeoutMs: number, requestId: string): ProviderError {
  return new ProviderError(
    `The provider did not finish this call within ${timeoutMs / 1000} s and gave up (request id ${requestId}). ` +
      "Try again later; if it keeps happening, check the provider's log.",
    500,
  );
}

/**
 * Every call of one provider has the same timeout, so deadlines come in the order calls start:
 * the calls in flight, kept in that order, share ONE timer armed for the oldest instead of a
 * timer per request. The timer is unref'd: an answer still owed keeps its socket, and so the
 * process, alive.
 */
export function boundedBy(timeoutMs: number): Bounded {
  const inFlight = new Set<PendingCall>();
  let timer: NodeJS.Timeout | undefined;

  const arm = (delayMs: number): void => {
    timer = setTimeout(expireDue, delayMs);
    timer.unref();
  };
  const expireDue = (): void => {
    timer = undefined;
    const now = performance.now();
    for (const call of inFlight) {
      if (call.deadline > now) return arm(call.deadline - now);
      inFlight.delete(call);
      const error = timeoutError(timeoutMs, call.requestId);
      call.abort.abort(error);
      call.reject(error);
    }
  };

  return <T>(abort: LazyAbort, requestId: string, work: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      const call: PendingCall = { deadline: performance.now() + timeoutMs, abort, requestId, reject };
      inFlight.add(call);
      if (timer === undefined) arm(timeoutMs);
      let running: Promise<T>;
      try {
        running = work();
      } catch (error) {
        inFlight.delete(call);
        reject(error);
        return;
      }
      running.then(
        (result) => {
          inFlight.delete(call);
          resolve(result);
        },
        (error: unknown) => {
          inFlight.delete(call);
          reject(error);
        },
      );
    });
}
