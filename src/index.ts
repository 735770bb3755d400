/** provider-kit: build Tsuru provider services. */
export { createProvider, type Provider } from "./provider.js";
export {
  ALL_VARIANTS,
  ConfigurationError,
  DEFAULTS,
  type AuthOptions,
  type ProviderOptions,
  type Variant,
} from "./options.js";
export * from "./types.js";
export * from "./errors.js";
export * from "./schemas.js";
export type { Lifecycle, RequestContext } from "./lifecycle/lifecycle.js";
export { appBindingKey, type RegistryOptions } from "./lifecycle/registry.js";
export type { BindingRef, LockedInstance, LockOptions, Store, StoreCensus } from "./lifecycle/store.js";
export type { HealthCheck } from "./http/healthcheck.js";
// Instance registry: stores and defaults (README section "lifecycle").
export { MemoryStore } from "./lifecycle/memory-store.js";
export {
  RedisStore,
  ReplicaWaitError,
  StoreUnavailableError,
  type RedisStoreClient,
  type RedisStoreOptions,
  type SentinelAddress,
} from "./lifecycle/redis-store.js";
export { LockLostError, LockTimeoutError } from "./lifecycle/store.js";
export { REGISTRY_DEFAULTS } from "./lifecycle/options.js";
