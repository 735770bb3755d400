/**
 * Bounds a handler call: past the timeout the call answers 500 and the handler's signal aborts,
 * so a handler that honours `ctx.signal` stops its work too.
 */
import { performance } from "node:perf_hooks";
import { ProviderError } from "../errors.js";
import type { LazyAbort } from "../lazy-abort.js";
import { LockTimeoutError } from "../lifecycle/store.js";

export interface PendingCall {
  readonly deadline: number;
  readonly abort: LazyAbort;
  readonly requestId: string;
  /** Answers the call with the timeout error. */
  readonly expire: (error: ProviderError) => void;
  /** Taken from the timeout before its work was done: its own answer is owed, however late. */
  claimed: boolean;
  /** The instance whose lock the call is waiting for, if it is: its timeout then answers 503, not 500. */
  lockWait: string | undefined;
}

/** The provider's handler timeout, shared by every call in flight. */
export interface Deadlines {
  readonly timeoutMs: number;
  /** Starts a call's clock: past the timeout, `abort` aborts and `expire` answers the call. */
  start(abort: LazyAbort, requestId: string, expire: (error: ProviderError) => void): PendingCall;
  /**
   * The call's work is about to make the change the platform will be told about: true when the
   * call's own answer is owed from now on (the timeout no longer answers it), false when the
   * timeout answered it already.
   */
  claim(call: PendingCall): boolean;
  /** The call's work is done: true while its answer is still owed, false once it expired. */
  finish(call: PendingCall): boolean;
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
 * timer per request, and no promise wraps the handler's. The timer is unref'd: an answer still
 * owed keeps its socket, and so the process, alive.
 */
export function deadlinesOf(timeoutMs: number): Deadlines {
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
      // A call still waiting for its instance lock was held up by another call, not by its handler.
      const error = call.lockWait === undefined ? timeoutError(timeoutMs, call.requestId) : new LockTimeoutError(call.lockWait);
      call.abort.abort(error);
      call.expire(error);
    }
  };

  return {
    timeoutMs,
    start(abort, requestId, expire) {
      const call: PendingCall = { deadline: performance.now() + timeoutMs, abort, requestId, expire, claimed: false, lockWait: undefined };
      inFlight.add(call);
      if (timer === undefined) arm(timeoutMs);
      return call;
    },
    claim(call) {
      if (inFlight.delete(call)) call.claimed = true;
      return call.claimed;
    },
    finish: (call) => inFlight.delete(call) || call.claimed,
  };
}
