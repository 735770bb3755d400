/**
 * Custom actions: a provider's own commands, which the platform's proxy forwards from its users
 * with the service's credentials. Instance actions live under `/resources/<instance>/<path>` (the
 * platform's instance proxy: permission per action, see `actionsManifest`); service actions under
 * `/authenticated-resources/<path>` (any logged-in user of the platform).
 *
 * They are declared once (`declareActions`: name, method, path, body and query schemas, and
 * whether the action changes the instance), then implemented next to the handlers
 * (`.implement`, which the compiler checks against the declarations). The declarations need
 * nothing to run, so `provider-kit manifest` reads them without starting the provider.
 */
import type { z } from "zod";
import type {
  ActionDeclaration,
  InstanceActionDeclaration,
  ProviderActions,
  ServiceActionDeclaration,
} from "./action-declarations.js";
import { ACTION_METHODS, ACTION_NAME_PATTERN, INSTANCE_SUBPATHS, type ActionsManifest } from "./contract.js";
import { ConfigurationError } from "./errors.js";
import { covers, overlap, type PatternSegment } from "./path-patterns.js";
import type { HandlerContext, InstanceData } from "./types.js";

// ---------------------------------------------------------------------------
// Handlers.

type Segments<P extends string> = P extends `/${infer Head}/${infer Tail}` ? Head | Segments<`/${Tail}`> : P extends `/${infer Last}` ? Last : never;
type ParameterName<S extends string> = S extends `:${infer Name}` ? Name : never;

/** The parameters of a path pattern: `"/users/:user"` gives `{ user: string }`. */
export type PathParams<P extends string> = { [K in ParameterName<Segments<P>>]: string };

export interface ServiceActionRequest<Params, Body, Query> {
  /** The path's parameters, percent-decoded. */
  params: Params;
  body: Body;
  query: Query;
}

export interface InstanceActionRequest<Params, Body, Query> extends ServiceActionRequest<Params, Body, Query> {
  instance: string;
}

/** What a service action gets besides its request: no instance, so no record. */
export type ServiceActionContext = Omit<HandlerContext, "record" | "binding">;

/** What an action declared with `lock: true` gets: it may keep data on the instance record. */
export interface LockedActionContext extends HandlerContext {
  /** Merged into the record's `data`, saved before the lock is released if the action succeeds. */
  keepData(data: InstanceData): void;
}

/**
 * The handler a declaration asks for. What it returns is the answer: nothing answers 204, anything
 * else 200 with it as JSON.
 */
export type ActionHandler<D> =
  D extends InstanceActionDeclaration<infer P, infer B, infer Q, infer L>
    ? (
        request: InstanceActionRequest<PathParams<P>, z.output<B>, z.output<Q>>,
        context: [L] extends [true] ? LockedActionContext : HandlerContext,
      ) => unknown
    : D extends ServiceActionDeclaration<infer P, infer B, infer Q>
      ? (request: ServiceActionRequest<PathParams<P>, z.output<B>, z.output<Q>>, context: ServiceActionContext) => unknown
      : never;

export interface DeclaredActions<D extends Record<string, ActionDeclaration>> {
  readonly declarations: D;
  /** One handler per declaration, under the same key; every declaration must have one. */
  implement(handlers: { [K in keyof D]: ActionHandler<D[K]> }): ProviderActions;
}

/**
 * Declares a provider's actions, by a key of your choosing (the handlers use the same keys).
 * Throws a ConfigurationError for a declaration the provider could not serve: a bad name, method
 * or path, a path the contract already has, or two actions that would answer the same call.
 */
export function declareActions<const D extends Record<string, ActionDeclaration>>(declarations: D): DeclaredActions<D> {
  checkDeclarations(declarations);
  return Object.freeze({
    declarations,
    implement(handlers: { [K in keyof D]: ActionHandler<D[K]> }): ProviderActions {
      const given: Record<string, unknown> = handlers;
      const missing = Object.keys(declarations).filter((key) => typeof given[key] !== "function");
      const unknown = Object.keys(given).filter((key) => !Object.hasOwn(declarations, key));
      if (missing.length > 0 || unknown.length > 0) {
        throw new ConfigurationError(
          "actions.implement: give exactly one handler per declared action" +
            (missing.length > 0 ? `; missing: ${missing.join(", ")}` : "") +
            (unknown.length > 0 ? `; not declared: ${unknown.join(", ")}` : "") +
            ".",
        );
      }
      return Object.freeze({ declarations, handlers: Object.freeze({ ...handlers }) });
    },
  });
}

// ---------------------------------------------------------------------------
// The checks: run by declareActions, and again by createProvider on what it is given.

/** A pattern's segments: `:name` matches one segment of any text, anything else itself. */
function shapeOf(path: string): PatternSegment[] {
  return path
    .split("/")
    .slice(1)
    .map((segment) => (segment.startsWith(":") ? "one" : { literal: segment }));
}

const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;
const PARAMETER_SEGMENT = /^:[A-Za-z_][A-Za-z0-9_]*$/;
const PATH_RULE =
  'start with "/" and hold segments of letters, digits, "-", "_", "." and "~", or parameters like ":user" (no trailing "/")';

function refuse(key: string, declaration: { name?: unknown }, problem: string): never {
  throw new ConfigurationError(`Action "${key}"${typeof declaration.name === "string" ? ` (${declaration.name})` : ""}: ${problem}`);
}

function checkOne(key: string, declaration: ActionDeclaration): void {
  const { name, method, path, kind } = declaration;
  if (kind !== "instance" && kind !== "service") refuse(key, declaration, "declare it with instanceAction() or serviceAction().");
  if (typeof name !== "string" || !ACTION_NAME_PATTERN.test(name)) {
    refuse(key, declaration, 'its name must be lower-case letters, digits and "-", in dot-separated words ("rotate-password", "users.create").');
  }
  if (!ACTION_METHODS.includes(method)) refuse(key, declaration, `its method must be one of ${ACTION_METHODS.join(", ")}.`);
  const segments = typeof path === "string" && path.startsWith("/") ? path.split("/").slice(1) : [];
  const wellFormed = segments.length > 0 && segments.every((segment) => PARAMETER_SEGMENT.test(segment) || (LITERAL_SEGMENT.test(segment) && segment !== "." && segment !== ".."));
  if (!wellFormed) refuse(key, declaration, `its path ${JSON.stringify(path)} must ${PATH_RULE}.`);
  const parameters = segments.filter((segment) => segment.startsWith(":"));
  if (new Set(parameters).size !== parameters.length) refuse(key, declaration, `its path ${path} names a parameter twice.`);
  if (kind === "instance") {
    if (parameters.includes(":instance")) refuse(key, declaration, `its path ${path} uses ":instance", which is the instance's own: use request.instance.`);
    if (declaration.lock !== true && declaration.lock !== false) {
      refuse(key, declaration, "say whether it changes the instance: lock: true (runs holding the instance lock) or lock: false (only reads).");
    }
    for (const contract of INSTANCE_SUBPATHS) {
      if (overlap(shapeOf(path), shapeOf(contract))) {
        refuse(
          key,
          declaration,
          `its path ${path} overlaps the contract's /resources/<instance>${contract}. ` +
            `Choose a path none of the contract's matches (${INSTANCE_SUBPATHS.join(", ")}); start it with a literal segment of your own.`,
        );
      }
    }
  }
}

/**
 * Refuses what the provider could not serve unambiguously. Two actions of one kind and method may
 * overlap only when one is more specific (`/users/me` and `/users/:user`): it is tried first, as
 * the platform's manifest matching does.
 */
function checkDeclarations(declarations: Readonly<Record<string, ActionDeclaration>>): void {
  if (typeof declarations !== "object" || declarations === null) {
    throw new ConfigurationError("declareActions: pass the declarations as an object, { key: instanceAction({...}), ... }.");
  }
  const entries = Object.entries(declarations);
  for (const [key, declaration] of entries) checkOne(key, declaration);
  for (const [i, [keyA, a]] of entries.entries()) {
    for (const [keyB, b] of entries.slice(i + 1)) {
      if (a.name === b.name) refuse(keyB, b, `its name is action "${keyA}"'s too: names must be unique.`);
      if (a.kind !== b.kind || a.method !== b.method) continue;
      const shapeA = shapeOf(a.path);
      const shapeB = shapeOf(b.path);
      if (overlap(shapeA, shapeB) && covers(shapeA, shapeB) === covers(shapeB, shapeA)) {
        refuse(
          keyB,
          b,
          `${b.method} ${b.path} and action "${keyA}"'s ${a.method} ${a.path} would answer the same calls: ` +
            "change one path, or make one more specific (a literal segment where the other has a parameter).",
        );
      }
    }
  }
}

/** Per segment, 0 for a literal and 1 for a parameter: `/users/me` gives "00", `/users/:user` "01". */
const specificityKey = (path: string) => shapeOf(path).map((segment) => (segment === "one" ? "1" : "0")).join("");

/**
 * Order in which the routes are tried: a literal before a parameter at the first segment where
 * two patterns differ in kind, so a more specific pattern comes before one that covers it.
 */
export function bySpecificity(a: ActionDeclaration, b: ActionDeclaration): number {
  const keyA = specificityKey(a.path);
  const keyB = specificityKey(b.path);
  return keyA < keyB ? -1 : keyA > keyB ? 1 : 0;
}

/** What createProvider checks of `handlers.actions`: the declarations, and a handler for each. */
export function checkActions(actions: ProviderActions): void {
  if (typeof actions !== "object" || actions === null || typeof actions.handlers !== "object" || actions.handlers === null) {
    throw new ConfigurationError("createProvider: handlers.actions must come from declareActions({...}).implement({...}).");
  }
  checkDeclarations(actions.declarations);
  for (const key of Object.keys(actions.declarations)) {
    if (typeof actions.handlers[key] !== "function") {
      throw new ConfigurationError(`createProvider: action "${key}" has no handler; implement every declared action.`);
    }
  }
}

// ---------------------------------------------------------------------------
// The platform's service manifest (1.31).

/**
 * Which proxied calls are which action, as `PUT /1.31/services/<service>/manifest` takes it. The
 * platform never asks the provider for it: write it from the declarations, so it cannot drift.
 */
export interface ActionsManifestOptions {
  /**
   * Refuse proxied calls that match no operation (default true: every path the provider serves
   * under an instance, the contract's aside, is declared).
   */
  strictActions?: boolean;
  /** Let holders of the platform's general proxy permission call the declared actions too (default false). */
  legacyCompat?: boolean;
}

/**
 * The service manifest of the instance actions (service actions are open to every logged-in user:
 * the platform checks no permission for them). Each action's name becomes the permission
 * `service-action.<service>.<name>`, which the platform's admins grant to teams.
 */
export function actionsManifest(actions: { readonly declarations: Readonly<Record<string, ActionDeclaration>> }, options: ActionsManifestOptions = {}): ActionsManifest {
  checkDeclarations(actions.declarations);
  const operations = Object.values(actions.declarations)
    .filter((declaration) => declaration.kind === "instance")
    .map(({ method, path, name }) => ({ method, path: path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, "{$1}"), action: name }));
  return { enabled: true, strict_actions: options.strictActions ?? true, legacy_compat: options.legacyCompat ?? false, operations };
}
