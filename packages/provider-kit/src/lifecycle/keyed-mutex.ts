/**
 * In-process lock per key, first come first served, whose waiters give up after a bounded time.
 * `MemoryStore` locks with it; `RedisStore` queues its own process's callers with it before
 * they contend for the Redis lock, so local waiters are served in order without polling.
 */
import { LockTimeoutError } from "./store.js";

/** Frees the key (hands it to the next waiter); calling it again does nothing. */
export type Release = () => void;

export class KeyedMutex {
  /** Key held → callbacks of the callers waiting for it, in arrival order. */
  private readonly waiting = new Map<string, Array<() => void>>();

  /** Take the key: resolves with its release once it is this caller's, or rejects with `LockTimeoutError` after `waitMs`. */
  lock(key: string, waitMs: number): Promise<Release> {
    const queue = this.waiting.get(key);
    if (queue === undefined) {
      this.waiting.set(key, []);
      return Promise.resolve(this.releaseOf(key));
    }
    return new Promise<Release>((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve(this.releaseOf(key));
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
    const release = await this.lock(key, waitMs);
    try {
      return await work();
    } finally {
      release();
    }
  }

  private releaseOf(key: string): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.get(key)?.shift();
      if (next) next();
      else this.waiting.delete(key);
    };
  }
}
