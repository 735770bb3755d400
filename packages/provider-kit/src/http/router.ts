/**
 * The provider's routes, matched by ONE matcher compiled once from the route table: Express's
 * router would try a layer per route, each with its own regular expression. The same table
 * serves both ways in (see `direct.ts`): as a middleware of the Express pipeline, and straight from
 * `node:http`. Literal segments match case-sensitively, as the platform's own paths do (so
 * `/resources/Plans` is the instance `Plans`, never the plan list); otherwise Express's rules are
 * kept: one trailing slash is allowed, HEAD is served by the GET route, parameters are whole
 * non-empty segments, percent-decoded (an undecodable one throws URIError, answered 400).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { scopeOf } from "./scope.js";

export type Method = "get" | "post" | "put" | "patch" | "delete";

/** Passes what went wrong on (an error), or hands the request to what comes next (nothing). */
export type Next = (error?: unknown) => void;

/** One middleware of the provider's request handling, on plain `node:http` objects. */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void;

/** A route's handler: it answers, or passes what went wrong to `next` (it never rejects). */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse, next: Next) => Promise<void> | void;

export interface RouteEntry {
  method: Method;
  /** `/resources/:instance/status`: literal segments and `:name` parameters. */
  path: string;
  handler: RouteHandler;
}

interface CompiledRoute {
  method: string;
  path: string;
  /** Per segment: the literal, or null for a parameter. */
  literals: ReadonlyArray<string | null>;
  /** Parameter names, by segment index. */
  params: ReadonlyArray<readonly [index: number, name: string]>;
  handler: RouteHandler;
}

/** A route that matched a request, its parameters not yet decoded. */
interface Match {
  route: CompiledRoute;
  segments: readonly string[];
}

export interface RouteTable {
  /** The first route (in table order) serving this method and request path. */
  find(method: string | undefined, path: string): Match | undefined;
  /** Runs the matched route: its pattern and decoded parameters go on the request scope. */
  run(match: Match, req: IncomingMessage, res: ServerResponse, next: Next): void;
  /** The table as a middleware: no match, `next()`. */
  middleware: Middleware;
}

/**
 * `/a/b/` → `["", "a", "b"]` (with one trailing slash allowed; without, `["", "a", "b", ""]`): the
 * leading empty segment keeps indexes aligned with patterns.
 */
function segmentsOf(path: string, trailingSlash = true): string[] {
  const trimmed = trailingSlash && path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed.split("/");
}

function compile({ method, path, handler }: RouteEntry): CompiledRoute {
  const segments = segmentsOf(path);
  return {
    method: method.toUpperCase(),
    path,
    literals: segments.map((segment) => (segment.startsWith(":") ? null : segment)),
    params: segments.flatMap((segment, index) => (segment.startsWith(":") ? [[index, segment.slice(1)] as const] : [])),
    handler,
  };
}

function matches(route: CompiledRoute, segments: readonly string[]): boolean {
  for (let i = 0; i < segments.length; i++) {
    const literal = route.literals[i];
    const segment = segments[i] as string;
    if (literal === null) {
      if (segment === "") return false;
    } else if (segment !== literal) {
      return false;
    }
  }
  return true;
}

function paramsOf(route: CompiledRoute, segments: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [index, name] of route.params) params[name] = decodeURIComponent(segments[index] as string);
  return params;
}

/**
 * Routes are tried in table order among those with the same number of segments.
 * `trailingSlash: false`: the paths must be exactly the patterns.
 */
export function routeTable(routes: readonly RouteEntry[], { trailingSlash = true } = {}): RouteTable {
  const bySegmentCount = new Map<number, CompiledRoute[]>();
  for (const route of routes.map(compile)) {
    const sameLength = bySegmentCount.get(route.literals.length) ?? [];
    sameLength.push(route);
    bySegmentCount.set(route.literals.length, sameLength);
  }

  const find = (requestMethod: string | undefined, path: string): Match | undefined => {
    const method = requestMethod === "HEAD" ? "GET" : requestMethod;
    const segments = segmentsOf(path, trailingSlash);
    for (const route of bySegmentCount.get(segments.length) ?? []) {
      if (route.method === method && matches(route, segments)) return { route, segments };
    }
    return undefined;
  };
  const run = ({ route, segments }: Match, req: IncomingMessage, res: ServerResponse, next: Next): void => {
    const scope = scopeOf(req);
    try {
      scope.params = paramsOf(route, segments);
    } catch (undecodable) {
      return next(undecodable);
    }
    scope.route = route.path;
    void route.handler(req, res, next);
  };
  return {
    find,
    run,
    middleware(req, res, next) {
      const match = find(req.method, scopeOf(req).path);
      if (match === undefined) return next();
      run(match, req, res, next);
    },
  };
}
