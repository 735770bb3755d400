/** provider-kit: build Tsuru provider services. */
export { createProvider, type Provider } from "./provider.js";
export { DEFAULTS, type AuthOptions, type ProviderOptions } from "./options.js";
export type { OsbOptions } from "./osb/options.js";
export { OSB_NAME_PATTERN } from "./osb/call.js";
export type { OriginatingIdentity, OsbCall } from "./osb/types.js";
export {
  ENCODINGS,
  INSTANCE_NAME_PATTERN,
  NAME_MAX_LENGTH,
  NAME_PATTERN,
  RESERVED_INSTANCE_NAMES,
  VARIANTS,
  type ActionsManifest,
  type Encoding,
  type Variant,
} from "./contract.js";
export * from "./types.js";
export {
  actionsManifest,
  declareActions,
  type ActionsManifestOptions,
  type ActionHandler,
  type DeclaredActions,
  type InstanceActionRequest,
  type LockedActionContext,
  type PathParams,
  type ServiceActionContext,
  type ServiceActionRequest,
} from "./actions.js";
export {
  instanceAction,
  serviceAction,
  type ActionDeclaration,
  type ActionMethod,
  type InstanceActionDeclaration,
  type ProviderActions,
  type ServiceActionDeclaration,
} from "./action-declarations.js";
// The zod the action schemas are checked with: declare them with this one.
export { z } from "zod";
export * from "./errors.js";
export * from "./schemas.js";
export type { Lifecycle, RequestContext } from "./lifecycle/lifecycle.js";
export { appBindingKey, type RegistryOptions } from "./lifecycle/registry.js";
export type { BindingRef, LockedInstance, LockOptions, Store, StoreCensus } from "./lifecycle/store.js";
export type { HealthCheck } from "./http/healthcheck.js";
// Instance registry: stores and defaults (README section "lifecycle"); RedisStore is in @provider-kit/redis-store.
export { MemoryStore } from "./lifecycle/memory-store.js";
export { LockLostError, LockTimeoutError } from "./lifecycle/store.js";
export { REGISTRY_DEFAULTS } from "./lifecycle/options.js";
