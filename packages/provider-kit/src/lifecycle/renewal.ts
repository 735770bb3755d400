/**
 * Keeping a claim that expires (an instance lock in Redis, a background step's lease) while its
 * work runs, and knowing when it can no longer be counted on.
 */

export interface Renewal {
  /** Renews the claim for another `ttlMs`: true when still held, false when someone else has it. */
  renew(): Promise<boolean>;
  ttlMs: number;
  /** When (`Date.now()` time) the request that took the claim was sent: it holds until at least then plus `ttlMs`. */
  takenAt: number;
  /**
   * Called once, when a renewal finds the claim taken, or when no renewal succeeded for so long
   * that the claim may have lapsed and another holder may have it.
   */
  lost(): void;
  /** A renewal that failed (Redis unreachable); the next one is tried a third of `ttlMs` later. */
  failed(error: unknown): void;
}

/** Renews the claim every third of its ttl until the returned function is called. */
export function keepRenewed({ renew, ttlMs, takenAt, lost, failed }: Renewal): () => void {
  let stopped = false;
  // A renewal proves the claim for ttlMs from when it was sent, not from when its answer came.
  let provenUntil = takenAt + ttlMs;
  let lapse: NodeJS.Timeout | undefined;
  const stop = () => {
    stopped = true;
    clearInterval(ticks);
    clearTimeout(lapse);
  };
  const lose = () => {
    if (stopped) return;
    stop();
    lost();
  };
  const watchLapse = () => {
    clearTimeout(lapse);
    lapse = setTimeout(lose, Math.max(0, provenUntil - Date.now()));
  };
  const ticks = setInterval(() => {
    const sentAt = Date.now();
    renew().then(
      (held) => {
        if (stopped) return;
        if (!held) return lose();
        provenUntil = Math.max(provenUntil, sentAt + ttlMs);
        watchLapse();
      },
      (error: unknown) => {
        if (!stopped) failed(error);
      },
    );
  }, ttlMs / 3);
  watchLapse();
  return stop;
}
