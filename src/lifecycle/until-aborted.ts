/**
 * Waiting for work that may ignore its abort signal: the caller stops waiting when the signal
 * aborts, and the work, abandoned, runs on unobserved.
 */

/** Settles with the work's outcome, or rejects with the signal's reason as soon as it aborts. */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  work.catch(() => {}); // an abandoned work may still fail later: nobody listens any more
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
