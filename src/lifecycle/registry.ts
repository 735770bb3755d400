/**
 * The registry-backed lifecycle: instance state, bindings, locking and background steps.
 * PLACEHOLDER until the lifecycle work lands: behaves like the stateless lifecycle.
 */
import type { Logger } from "pino";
import type { ProviderHandlers } from "../types.js";
import { statelessLifecycle, type Lifecycle } from "./lifecycle.js";
import type { Store } from "./store.js";

export interface RegistryOptions {
  /** Where state lives. Default: an in-memory store (one process, lost on restart). */
  store?: Store;
}

export function registryLifecycle(handlers: ProviderHandlers, _options: RegistryOptions, _log: Logger): Lifecycle {
  return statelessLifecycle(handlers);
}
