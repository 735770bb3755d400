/**
 * What a run made (instances, bindings) and how to remove each: both runners (native and
 * `--osb`) remove it all at the end, the newest first (bindings before their instance), and
 * name what they could not remove with the call that would.
 */
import type { Leftover } from "./types.js";

/** One thing the run made. */
export interface Removal {
  /** What is left over when the removal fails. */
  what: Pick<Leftover, "instance" | "binding">;
  /** The call that removes it, as a reader would send it by hand. */
  call: string;
  /** Removes it: undefined once it is gone, else why it is not (the answer that refused). */
  remove: () => Promise<string | undefined>;
}

export class Ledger {
  private readonly made = new Map<string, Removal>();
  /** What could not be removed, in the order the removals were tried. */
  readonly leftovers: Leftover[] = [];

  /** Records what `key` made; a thing made again (a rebind) keeps its first place. */
  add(key: string, removal: Removal): void {
    if (!this.made.has(key)) this.made.set(key, removal);
  }

  /** The run removed it itself. */
  delete(key: string): void {
    this.made.delete(key);
  }

  has(key: string): boolean {
    return this.made.has(key);
  }

  /** Removes what `key` made, now: what cannot be removed is a leftover. */
  async remove(key: string): Promise<void> {
    const removal = this.made.get(key);
    if (!removal) return;
    this.made.delete(key);
    const reason = await removal.remove();
    if (reason !== undefined) this.leftovers.push({ ...removal.what, reason, removeWith: removal.call });
  }

  /** Removes, the newest first, everything left that `which` selects (default all); returns every leftover of the run. */
  async removeAll(which: (what: Removal["what"]) => boolean = () => true): Promise<Leftover[]> {
    const keys = [...this.made].filter(([, removal]) => which(removal.what)).map(([key]) => key);
    for (const key of keys.reverse()) await this.remove(key);
    return this.leftovers;
  }
}
