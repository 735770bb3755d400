/**
 * Overlapping calls that want the same work done share one run of it: a caller joins the run in
 * flight for its key, or starts one. A run is forgotten once it settles, so the next call after
 * that starts afresh (a failure is not remembered).
 */
export class SharedRuns<K, V> {
  private readonly inFlight = new Map<K, Promise<V>>();

  run(key: K, start: () => Promise<V>): Promise<V> {
    let running = this.inFlight.get(key);
    if (running === undefined) {
      running = start().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, running);
    }
    return running;
  }
}
