/**
 * In-process lock per key, first come first served, whose waiters give up after a bounded time.
 * `MemoryStore` locks with it; `RedisStore` queues its own process's callers with it before
 * they contend for the Redis lock, so local waiters are served in order without polling.
 */
import { LockTimeoutError } from "./store.js";

export class KeyedMutex {
  /** Key held → callbacks of the callers waiting for it, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();

  /**
   * Take the key: undefined when it was free (taken at once, no promise to wait on), else a
   * promise that resolves once it is handed over, or rejects with `LockTimeoutError`.
   */
  acquire(key: string, waitMs: number): Promise<void> | undefined {
    const queue = this.waiting.get(key);
    if (queue === undefined) {
      this.waiting.set(key, []);
      return undefined;
    }
    return new Promise<void>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(grant), 1);
        reject(new LockTimeoutError(key));
      }, waitMs);
      queue.push(grant);
    });
  }

  /** Run `work` holding the key. */
  async hold<T>(key: string, waitMs: number, work: () => Promise<T>): Promise<T> {
    const handedOver = this.acquire(key, waitMs);
    if (handedOver) await handedOver;
    try {
      return await work();
    } finally {
      this.release(key);
    }
  }

  /** Someone waits for the key: releasing it now hands it over. */
  isAwaited(key: string): boolean {
    return (this.waiting.get(key)?.length ?? 0) > 0;
  }

  /** Hand the key to the next waiter (true), or free it. */
  release(key: string): boolean {
    const next = this.waiting.get(key)?.shift();
    if (next) next();
    else this.waiting.delete(key);
    return next !== undefined;
  }
}
