/**
 * The `osb` option of `createProvider`: what the catalog says about the service, and the check
 * that refuses a catalog the platform would reject (ids must never change, so none is made up).
 */
import { ConfigurationError } from "../errors.js";

export interface OsbOptions {
  /** The service offering's id in the catalog: a GUID that never changes. */
  serviceId: string;
  /** The offering's name (CLI-friendly: letters, digits, `-` and `.`). */
  serviceName: string;
  description: string;
  /**
   * Plan name (as the plans handler returns it) → its catalog id, a GUID that never changes.
   * A plan the handler returns without an id here is an error of the catalog call.
   */
  planIds: Record<string, string>;
  /** Plans whose create always finishes in the background: refused (422 AsyncRequired) without `accepts_incomplete=true`. */
  asyncPlans?: string[];
  /** Whether instances can be bound. Default true. */
  bindable?: boolean;
  /** Catalog `tags` of the offering (`redis`, `key-value`). */
  tags?: string[];
}

export interface ResolvedOsbOptions {
  serviceId: string;
  serviceName: string;
  description: string;
  /** Plan name → id. */
  planIds: ReadonlyMap<string, string>;
  /** Plan id → name. */
  planNames: ReadonlyMap<string, string>;
  asyncPlans: ReadonlySet<string>;
  bindable: boolean;
  tags: readonly string[];
}

const CLI_FRIENDLY = /^[A-Za-z0-9.-]+$/;

function text(value: unknown, name: string, fix: string): string {
  if (typeof value !== "string" || value.trim() === "") throw new ConfigurationError(`createProvider: osb.${name} must be a non-empty string. ${fix}`);
  return value;
}

/** Undefined: the provider speaks only the native contract. */
export function resolveOsbOptions(osb: OsbOptions | undefined, registryOn: boolean): ResolvedOsbOptions | undefined {
  if (osb === undefined) return undefined;
  const fix = 'Pass osb: { serviceId: "<guid>", serviceName: "my-service", description: "...", planIds: { "<plan name>": "<guid>" } }.';
  if (osb === null || typeof osb !== "object") throw new ConfigurationError(`createProvider: osb must be an object. ${fix}`);
  if (!registryOn) {
    throw new ConfigurationError(
      "createProvider: osb needs the registry (last_operation and the answers to repeated requests read its state): pass registry: { store }.",
    );
  }
  const serviceName = text(osb.serviceName, "serviceName", fix);
  if (!CLI_FRIENDLY.test(serviceName)) {
    throw new ConfigurationError(`createProvider: osb.serviceName "${serviceName}" must use only letters, digits, "-" and "." (platforms type it on a command line).`);
  }
  const entries = Object.entries(osb.planIds ?? {});
  if (entries.length === 0) throw new ConfigurationError(`createProvider: osb.planIds must give every plan its catalog id. ${fix}`);
  const planIds = new Map<string, string>();
  const planNames = new Map<string, string>();
  for (const [name, id] of entries) {
    text(id, `planIds["${name}"]`, fix);
    if (planNames.has(id) || id === osb.serviceId) {
      throw new ConfigurationError(`createProvider: the id "${id}" is given twice in osb; every plan and the service need an id of their own.`);
    }
    planIds.set(name, id);
    planNames.set(id, name);
  }
  const asyncPlans = osb.asyncPlans ?? [];
  const unknown = asyncPlans.filter((name) => !planIds.has(name));
  if (unknown.length > 0) {
    throw new ConfigurationError(`createProvider: osb.asyncPlans names ${unknown.map((n) => `"${n}"`).join(", ")}, which osb.planIds does not list.`);
  }
  return {
    serviceId: text(osb.serviceId, "serviceId", fix),
    serviceName,
    description: text(osb.description, "description", fix),
    planIds,
    planNames,
    asyncPlans: new Set(asyncPlans),
    bindable: osb.bindable ?? true,
    tags: [...(osb.tags ?? [])],
  };
}
