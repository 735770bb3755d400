/**
 * The service manifest of platform 1.31 (tsuru's service/manifest.go and service/service.go):
 * which proxied instance calls are which action. Paths are Go ServeMux patterns relative to the
 * instance: literal segments, `{name}` for one segment, `{name...}` (or a trailing `/`) for the
 * rest. Two operations of one method may overlap only when one is more specific, as ServeMux
 * requires; a call is the action of the most specific operation matching it.
 */
import { ACTION_NAME_PATTERN } from "provider-kit/contract";
import { covers, matches, overlap, type PatternSegment } from "provider-kit/contract";
import { badRequest } from "./errors.js";
import type { ActionOperation, ServiceActionsManifest } from "./model.js";

/** The methods the platform accepts in a manifest. */
const MANIFEST_METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"];
const WILDCARD = /^\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}$/;
const PERMISSION_PREFIX = "service-action";
/**
 * A manifest's bounds: every pair of operations of one method is compared, so these keep one
 * manifest's check to a few milliseconds (a service has a handful of actions).
 */
const MANIFEST_LIMITS = { operations: 100, pathLength: 256 };

/** The platform adds the leading `/` a path lacks. */
function patternPath(path: string): string {
  const trimmed = path.trim();
  return trimmed.startsWith("/") ? trimmed : `/${trimmed}`;
}

/** The pattern's segments, or why ServeMux would refuse it. */
function parsePattern(path: string): PatternSegment[] | string {
  const parts = patternPath(path).split("/").slice(1);
  const names = new Set<string>();
  const segments: PatternSegment[] = [];
  for (const [index, part] of parts.entries()) {
    const last = index === parts.length - 1;
    // `/x/` ends in an empty segment: ServeMux reads it as "and anything below".
    if (part === "" && last) {
      segments.push("rest");
      continue;
    }
    if (part === "" || part === "." || part === "..") return `its segment "${part}" can never match a cleaned path`;
    if (!part.includes("{") && !part.includes("}")) {
      segments.push({ literal: part });
      continue;
    }
    const wildcard = WILDCARD.exec(part);
    if (!wildcard) return `its segment "${part}" is neither a literal nor a whole {name} or {name...}`;
    if (names.has(wildcard[1]!)) return `it names the wildcard {${wildcard[1]}} twice`;
    names.add(wildcard[1]!);
    if (wildcard[2] && !last) return `{${wildcard[1]}...} may only end it`;
    segments.push(wildcard[2] ? "rest" : "one");
  }
  return segments;
}

const quoted = (text: unknown) => JSON.stringify(typeof text === "string" ? text.slice(0, 100) : text);

/**
 * The manifest a `PUT` sent, checked as the platform checks it; a 400 naming the operation and
 * what is wrong with it otherwise.
 */
export function validManifest(document: unknown): ServiceActionsManifest {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw badRequest('Send the manifest as a JSON object: {"enabled", "strict_actions", "legacy_compat", "operations": [{"method", "path", "action"}]}.');
  }
  const fields = document as Record<string, unknown>;
  for (const flag of ["enabled", "strict_actions", "legacy_compat"]) {
    if (fields[flag] !== undefined && typeof fields[flag] !== "boolean") throw badRequest(`The manifest's "${flag}" must be true or false.`);
  }
  const listed = fields.operations ?? [];
  if (!Array.isArray(listed)) throw badRequest('The manifest\'s "operations" must be a list of {"method", "path", "action"}.');
  if (listed.length > MANIFEST_LIMITS.operations) {
    throw badRequest(`The manifest has ${listed.length} operations, more than the ${MANIFEST_LIMITS.operations} the platform takes: give each action one operation and leave out the calls no permission guards.`);
  }
  const operations = listed.map((item: unknown, index): ActionOperation => {
    const op = (item !== null && typeof item === "object" ? item : {}) as Record<string, unknown>;
    if (typeof op.method !== "string" || typeof op.path !== "string" || typeof op.action !== "string") {
      throw badRequest(`Manifest operation ${index + 1} must be an object of three strings: "method", "path" and "action".`);
    }
    if (op.path.length > MANIFEST_LIMITS.pathLength) {
      throw badRequest(`The path of manifest operation ${index + 1} is ${op.path.length} characters long, more than ${MANIFEST_LIMITS.pathLength}.`);
    }
    return { method: op.method, path: op.path, action: op.action };
  });
  checkOperations(operations);
  return {
    enabled: fields.enabled === true,
    strict_actions: fields.strict_actions === true,
    legacy_compat: fields.legacy_compat === true,
    operations,
  };
}

function checkOperations(operations: readonly ActionOperation[]): void {
  const actions = new Set<string>();
  const routes = new Set<string>();
  // Only operations of one method can clash: each is compared with the earlier ones of its method.
  const byMethod = new Map<string, Array<{ op: ActionOperation; segments: PatternSegment[] }>>();
  for (const op of operations) {
    if (op.action === "") throw badRequest(`Manifest action is required for operation ${quoted(op.path)}.`);
    if (actions.has(op.action)) throw badRequest(`Duplicate manifest operation action ${quoted(op.action)}: each action names one operation.`);
    actions.add(op.action);
    if (!MANIFEST_METHODS.includes(op.method)) {
      throw badRequest(`Invalid manifest method ${quoted(op.method)} for operation ${quoted(op.action)}: use one of ${MANIFEST_METHODS.join(", ")}.`);
    }
    if (!ACTION_NAME_PATTERN.test(op.action)) {
      throw badRequest(`Invalid manifest action ${quoted(op.action)} for operation ${quoted(op.path)}: lower-case letters, digits and "-", in dot-separated words.`);
    }
    if (op.path.trim() === "") throw badRequest(`Manifest path is required for operation ${quoted(op.action)}.`);
    const segments = parsePattern(op.path);
    if (typeof segments === "string") throw badRequest(`Invalid manifest route "${op.method} ${patternPath(op.path)}": ${segments}.`);
    const route = `${op.method} ${patternPath(op.path)}`;
    if (routes.has(route)) throw badRequest(`Duplicate manifest route ${op.method} ${op.path}.`);
    routes.add(route);
    const parsed = byMethod.get(op.method) ?? [];
    for (const other of parsed) {
      if (overlap(other.segments, segments) && covers(other.segments, segments) === covers(segments, other.segments)) {
        throw badRequest(
          `Manifest routes "${op.method} ${patternPath(op.path)}" (${op.action}) and "${other.op.method} ${patternPath(other.op.path)}" (${other.op.action}) ` +
            "match the same calls and neither is more specific: change one of them.",
        );
      }
    }
    parsed.push({ op, segments });
    byMethod.set(op.method, parsed);
  }
}

/**
 * The operation a call is, from the path below the instance (`/apps/web/rotate-password`):
 * the most specific one matching; GET operations answer HEAD when no HEAD one does.
 */
export function matchOperation(manifest: ServiceActionsManifest, method: string, path: string): ActionOperation | undefined {
  const segments = path.split("/").slice(1);
  const candidates = (wanted: string) =>
    manifest.operations
      .filter((op) => op.method === wanted)
      .map((op) => ({ op, pattern: parsePattern(op.path) as PatternSegment[] }))
      .filter(({ pattern }) => matches(pattern, segments));
  const exact = candidates(method);
  const found = exact.length === 0 && method === "HEAD" ? candidates("GET") : exact;
  return found.find((one) => found.every((other) => covers(other.pattern, one.pattern)))?.op;
}

/** `service-action.<service>.<action>`: the permission a manifest's action becomes. */
export function actionPermission(service: string, action: string): string {
  return `${PERMISSION_PREFIX}.${service}.${action}`;
}

/** A grant of `granted` (an action or a leading part of one) covers `action`. */
export function grantCovers(granted: string, action: string): boolean {
  return action === granted || action.startsWith(`${granted}.`);
}

/** The action names of the manifest that a grant of `granted` covers. */
export function coveredActions(manifest: ServiceActionsManifest | undefined, granted: string): string[] {
  return (manifest?.operations ?? []).map((op) => op.action).filter((action) => grantCovers(granted, action));
}

export interface GrantConflict {
  action: string;
  teams: string[];
}

/**
 * The grants a new manifest would orphan (service/manifest.go): a grant covering a dropped action
 * conflicts unless it still covers an action the new manifest keeps.
 */
export function orphanedGrants(current: ServiceActionsManifest | undefined, next: ServiceActionsManifest, grants: Record<string, string[]>): GrantConflict[] {
  const kept = new Set(next.operations.map((op) => op.action));
  const removed = (current?.operations ?? []).map((op) => op.action).filter((action) => !kept.has(action));
  const teamsByAction = new Map<string, Set<string>>();
  for (const [granted, teams] of Object.entries(grants)) {
    if (teams.length === 0 || [...kept].some((action) => grantCovers(granted, action))) continue;
    for (const action of removed.filter((one) => grantCovers(granted, one))) {
      const holders = teamsByAction.get(action) ?? new Set<string>();
      for (const team of teams) holders.add(team);
      teamsByAction.set(action, holders);
    }
  }
  return [...teamsByAction]
    .map(([action, teams]) => ({ action, teams: [...teams].sort() }))
    .sort((a, b) => a.action.localeCompare(b.action));
}
