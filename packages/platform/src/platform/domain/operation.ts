/**
 * Which API request a provider call belongs to, whether it undoes an earlier step and whether the
 * user forced it, so the console can group the undo calls under the operation that caused them
 * and show the failures a forced operation passed over. Carried by async context: the domain
 * code that sends calls does not pass it around.
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface Operation {
  /** Unique per request across restarts: `<start time, base 36>-<request number>`. */
  id: string;
  /** `PUT /services/instances/cache/web`. */
  label: string;
}

interface Scope {
  operation: Operation;
  undo: boolean;
  forced: boolean;
}

const scope = new AsyncLocalStorage<Scope>();
const run = Date.now().toString(36);
let sequence = 0;

/** Runs one API request's work as one operation. */
export function withinOperation<T>(label: string, work: () => T): T {
  return scope.run({ operation: { id: `${run}-${++sequence}`, label }, undo: false, forced: false }, work);
}

/** Runs a step that undoes an earlier one: its provider calls are marked `undo`. */
export function undoing<T>(work: () => Promise<T>): Promise<T> {
  const current = scope.getStore();
  return current ? scope.run({ ...current, undo: true, forced: false }, work) : work();
}

/** Runs steps the user forced (their provider failures are passed over): their calls are marked `forced`. */
export function forcing<T>(work: () => Promise<T>): Promise<T> {
  const current = scope.getStore();
  return current ? scope.run({ ...current, forced: true }, work) : work();
}

export function currentOperation(): { operation?: Operation; undo?: true; forced?: true } {
  const current = scope.getStore();
  if (!current) return {};
  return { operation: current.operation, ...(current.undo ? { undo: true } : {}), ...(current.forced ? { forced: true } : {}) };
}
