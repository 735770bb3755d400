/**
 * What a custom action is, before any handler: its name, method, path and schemas. Apart from
 * the handlers (src/actions.ts) so the handler types (src/types.ts) and the manifest read them
 * without a cycle.
 */
import type { z } from "zod";
import type { ACTION_METHODS } from "./contract.js";

export type ActionMethod = (typeof ACTION_METHODS)[number];

/** The schema of a body or query an action leaves undeclared: an empty object. */
type Nothing = z.ZodObject<Record<never, never>>;

// ---------------------------------------------------------------------------
// Declarations.

interface ActionShape<P extends string, B extends z.ZodType, Q extends z.ZodType> {
  /**
   * `rotate-password`, `users.create`: lower-case words, digits and `-`, dot-separated. The
   * platform makes each instance action a permission, `service-action.<service>.<name>`.
   */
  name: string;
  method: ActionMethod;
  /** Under the instance (or `/authenticated-resources`): literal segments and `:name` parameters, `/users/:user`. */
  path: P;
  /** The body as the caller sent it (form or JSON). Default: none read. */
  body?: B;
  /** The query string, repeated keys as lists. Default: none read. */
  query?: Q;
}

export interface InstanceActionShape<P extends string, B extends z.ZodType, Q extends z.ZodType, L extends boolean> extends ActionShape<P, B, Q> {
  /**
   * true for an action that changes the instance: it runs holding the instance lock (one at a
   * time with every other call that changes the instance) and may keep data on its record.
   * false for one that only reads: it runs at once.
   */
  lock: L;
}

export type InstanceActionDeclaration<P extends string = string, B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, L extends boolean = boolean> =
  Readonly<InstanceActionShape<P, B, Q, L>> & { readonly kind: "instance" };

export type ServiceActionDeclaration<P extends string = string, B extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType> =
  Readonly<ActionShape<P, B, Q>> & { readonly kind: "service" };

export type ActionDeclaration = InstanceActionDeclaration | ServiceActionDeclaration;

/** An action under the instance: `/resources/<instance><path>`. */
export function instanceAction<const P extends string, const L extends boolean, B extends z.ZodType = Nothing, Q extends z.ZodType = Nothing>(
  shape: InstanceActionShape<P, B, Q, L>,
): InstanceActionDeclaration<P, NoInfer<B>, NoInfer<Q>, L> {
  return Object.freeze({ ...shape, kind: "instance" as const });
}

/** A service-wide action: `/authenticated-resources<path>`, which any logged-in user of the platform may call. */
export function serviceAction<const P extends string, B extends z.ZodType = Nothing, Q extends z.ZodType = Nothing>(
  shape: ActionShape<P, B, Q>,
): ServiceActionDeclaration<P, NoInfer<B>, NoInfer<Q>> {
  return Object.freeze({ ...shape, kind: "service" as const });
}

/** A handler whose request and context types were checked when it was implemented. */
export type CheckedActionHandler = (request: never, context: never) => unknown;

/** Declared actions with their handlers: `handlers.actions` of `createProvider`. */
export interface ProviderActions {
  readonly declarations: Readonly<Record<string, ActionDeclaration>>;
  readonly handlers: Readonly<Record<string, CheckedActionHandler>>;
}

