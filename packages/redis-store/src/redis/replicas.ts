/**
 * Writes that count only once replicas have them: `WAIT` after the writes, on their connection.
 * The registry's store and the Redis example's ACL journal both write this way.
 */
import { ProviderError } from "provider-kit";

/** 503: the primary has the write, but not enough replicas confirmed it in time to call it safe. */
export class ReplicaWaitError extends ProviderError {
  constructor(confirmed: number, wanted: number) {
    super(
      `The provider's state store (Redis) confirmed the write on ${confirmed} of ${wanted} replicas in time; try again in a moment.`,
      503,
    );
  }
}

/** `replicaTimeoutMs` when not given: how long a write waits for its replicas. */
export const DEFAULT_REPLICA_TIMEOUT_MS = 1_000;

/**
 * Sends `writes` with a `WAIT` for `replicas` behind them, in one pipeline on one connection
 * (`WAIT` counts the writes of its own connection); rejects with `ReplicaWaitError` when fewer
 * confirm within `timeoutMs`. Resolves with the writes' replies.
 */
export async function afterReplicas(
  writes: { wait(replicas: number, timeoutMs: number): { execAsPipeline(): Promise<unknown[]> } },
  replicas: number,
  timeoutMs: number,
): Promise<unknown[]> {
  const replies = await writes.wait(replicas, timeoutMs).execAsPipeline();
  const confirmed = Number(replies.at(-1));
  if (confirmed < replicas) throw new ReplicaWaitError(confirmed, replicas);
  return replies.slice(0, -1);
}
