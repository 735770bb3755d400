/**
 * The registry createProvider runs on a store, opened on its own (no HTTP, its step metrics
 * counted where nobody reads them): for a store's tests, which drive the registry's calls on
 * their store directly, as @provider-kit/redis-store's do.
 */
import type { Logger } from "pino";
import { createMetrics } from "../metrics.js";
import type { ProviderHandlers } from "../types.js";
import { registryLifecycle, type RegistryLifecycle, type RegistryOptions } from "./registry.js";

export function openRegistry(handlers: ProviderHandlers, options: RegistryOptions, logger: Logger): RegistryLifecycle {
  return registryLifecycle(handlers, options, logger, createMetrics().steps);
}
