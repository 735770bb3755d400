/**
 * An AbortSignal made only when someone reads it: a handler's `ctx.signal`, an instance lock's
 * signal. Most never do, so most calls build no AbortController.
 */
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

  throwIfAborted(): void {
    if (this.#aborted) throw this.#reason;
  }

  abort(reason: unknown): void {
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
  }
}
