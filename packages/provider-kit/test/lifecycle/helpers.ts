/**
 * Shared pieces of the lifecycle tests: the registry on a fresh store of each kind, and the
 * store harness (test/support/stores.ts) with the polling helper and gates they use.
 */
import { afterEach } from "vitest";
import type { Lifecycle } from "../../src/lifecycle/lifecycle.js";
import { createMetrics } from "../../src/metrics.js";
import { registryLifecycle, type RegistryLifecycle, type RegistryOptions } from "../../src/lifecycle/registry.js";
import type { Store } from "../../src/lifecycle/store.js";
import type { ProviderHandlers } from "../../src/types.js";
import { silent, useStores, type StoreKind, type Stores } from "../../../../test/support/stores.js";

export * from "../../../../test/support/stores.js";
export { eventually } from "../../../../test/support/eventually.js";
export { gate } from "../../../../test/support/gate.js";

/** Step metrics counted into a registry nobody reads. */
export const steps = createMetrics().steps;

export type StartLifecycle = (
  handlers: ProviderHandlers,
  options?: Partial<RegistryOptions>,
) => { lifecycle: RegistryLifecycle; store: Store };

/**
 * Registers hooks: `start` opens a registry lifecycle on a fresh store of `kind` (or the one in
 * `options`), with `defaults` under `options`; every lifecycle is closed after its test.
 */
export function useLifecycles(kind: StoreKind, defaults: Partial<RegistryOptions>): { stores: Stores; start: StartLifecycle } {
  const stores = useStores();
  let lifecycles: Lifecycle[] = [];
  afterEach(async () => {
    await Promise.all(lifecycles.map((lifecycle) => lifecycle.close()));
    lifecycles = [];
  });
  const start: StartLifecycle = (handlers, options = {}) => {
    const store = options.store ?? stores.fresh(kind);
    const lifecycle = registryLifecycle(handlers, { ...defaults, ...options, store }, silent, steps);
    lifecycles.push(lifecycle);
    return { lifecycle, store };
  };
  return { stores, start };
}

