/**
 * Options of the instance registry, their defaults, and the check that refuses bad values.
 */
import { ConfigurationError } from "../errors.js";
import type { Store } from "./store.js";

export interface RegistryOptions {
  /**
   * Required: where state lives. A `RedisStore` survives restarts and serves several replicas
   * (production); a `MemoryStore` lives in one process and forgets everything on restart (tests,
   * single-process trials). The store is the caller's to close, after the provider's `close()`.
   */
  store: Store;
  /** Tries of a background step (`provision`, `deprovision`), the first included. Default 5. */
  maxStepAttempts?: number;
  /** Wait before the second try; each later wait is multiplied by `stepRetryBackoff`. Default 1 000 ms. */
  stepRetryDelayMs?: number;
  /** Factor between two consecutive retry waits (1 = constant). Default 2. */
  stepRetryBackoff?: number;
  /** Time a step may take, all tries together, before the instance is marked failed. Default 600 000 ms (10 min). */
  stepTimeLimitMs?: number;
  /**
   * How long a process's claim on a running step lasts without renewal (renewed every third of it).
   * When a process dies, another takes the step over after at most this long. Default 15 000 ms.
   */
  leaseTtlMs?: number;
  /** How often each process looks for steps nobody is running (and once at start). Default 5 000 ms. */
  pollIntervalMs?: number;
  /** How long a call waits for another call on the same instance to finish before answering 503. Default 30 000 ms. */
  lockTimeoutMs?: number;
  /**
   * How long a call keeps its instance lock past its handler timeout, for a handler that honours
   * `ctx.signal` to wind up. Then the lock is let go even if the handler still runs: the next
   * call on the instance goes ahead, and what the late handler saves is refused. Default 10 000 ms.
   */
  lockGraceMs?: number;
}

export type ResolvedRegistryOptions = Required<Omit<RegistryOptions, "store">>;

export const REGISTRY_DEFAULTS: ResolvedRegistryOptions = {
  maxStepAttempts: 5,
  stepRetryDelayMs: 1_000,
  stepRetryBackoff: 2,
  stepTimeLimitMs: 600_000,
  leaseTtlMs: 15_000,
  pollIntervalMs: 5_000,
  lockTimeoutMs: 30_000,
  lockGraceMs: 10_000,
};

export function resolveRegistryOptions(options: RegistryOptions): ResolvedRegistryOptions {
  const resolved = { ...REGISTRY_DEFAULTS };
  for (const name of Object.keys(REGISTRY_DEFAULTS) as Array<keyof ResolvedRegistryOptions>) {
    const value = options[name];
    if (value === undefined) continue;
    const valid = name === "stepRetryBackoff" ? Number.isFinite(value) && value >= 1 : Number.isFinite(value) && value > 0;
    if (!valid) {
      const expected = name === "stepRetryBackoff" ? "a number of at least 1" : "a positive number";
      throw new ConfigurationError(`createProvider: registry.${name} must be ${expected}, got ${String(value)}.`);
    }
    resolved[name] = value;
  }
  if (!Number.isInteger(resolved.maxStepAttempts)) {
    throw new ConfigurationError(`createProvider: registry.maxStepAttempts must be a whole number, got ${resolved.maxStepAttempts}.`);
  }
  return resolved;
}
