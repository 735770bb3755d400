/**
 * `provider-kit/store`: what a store implementation (such as `@provider-kit/redis-store`) builds
 * on: the `Store` and `LockedInstance` contract the lifecycle calls, the lock errors it maps to
 * answers, the helpers `MemoryStore` uses for locks, renewal and shared work, and the registry
 * opened on a store for that store's tests.
 */
export {
  bindingField,
  emptyCensus,
  HeldLock,
  kindOfField,
  LAST_WRITE,
  LockLostError,
  LockTimeoutError,
  REMOVAL,
  type BindingRef,
  type DeleteOptions,
  type InstanceWrites,
  type LockedInstance,
  type LockOptions,
  type Store,
  type StoreCensus,
  type WriteOptions,
} from "../lifecycle/store.js";
export { KeyedMutex, type Release } from "../lifecycle/keyed-mutex.js";
export { keepRenewed, type Renewal } from "../lifecycle/renewal.js";
export { SharedRuns } from "../shared-runs.js";
export { LazyAbort } from "../lazy-abort.js";
export { openRegistry } from "../lifecycle/open-registry.js";
export type { RegistryLifecycle } from "../lifecycle/registry.js";
