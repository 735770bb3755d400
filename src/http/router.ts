/**
 * Dispatches the provider's routes from ONE middleware with a matcher compiled once from the
 * route table: Express's router would try a layer per route, each with its own regular
 * expression. Literal segments match case-sensitively, as the platform's own paths do (so
 * `/resources/Plans` is the instance `Plans`, never the plan list); otherwise Express's rules are
 * kept: one trailing slash is allowed, HEAD is served by the GET route, parameters are whole
 * non-empty segments, percent-decoded (an undecodable one throws URIError, answered 400).
 * No match: `next()`.
 */
import type { NextFunction, Request, RequestHandler, Response } from "express";

export type Method = "get" | "post" | "put" | "delete";

/** A route's handler: it answers, or passes what went wrong to `next` (it never rejects). */
export type RouteHandler = (req: Request, res: Response, next: NextFunction) => Promise<void>;

export interface RouteEntry {
  method: Method;
  /** `/resources/:instance/status`: literal segments and `:name` parameters. */
  path: string;
  handler: RouteHandler;
}

interface CompiledRoute {
  method: string;
  /** Per segment: the literal, or null for a parameter. */
  literals: ReadonlyArray<string | null>;
  /** Parameter names, by segment index. */
  params: ReadonlyArray<readonly [index: number, name: string]>;
  handler: RouteHandler;
}

/** `/a/b/` → `["", "a", "b"]`: the leading empty segment keeps indexes aligned with patterns. */
function segmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
  return trimmed.split("/");
}

function compile({ method, path, handler }: RouteEntry): CompiledRoute {
  const segments = segmentsOf(path);
  return {
    method: method.toUpperCase(),
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

/** Routes are tried in table order among those with the same number of segments. */
export function routeTable(routes: readonly RouteEntry[]): RequestHandler {
  const bySegmentCount = new Map<number, CompiledRoute[]>();
  for (const route of routes.map(compile)) {
    const sameLength = bySegmentCount.get(route.literals.length) ?? [];
    sameLength.push(route);
    bySegmentCount.set(route.literals.length, sameLength);
  }

  return (req, res, next) => {
    const method = req.method === "HEAD" ? "GET" : req.method;
    const segments = segmentsOf(req.path);
    for (const route of bySegmentCount.get(segments.length) ?? []) {
      if (route.method !== method || !matches(route, segments)) continue;
      req.params = paramsOf(route, segments);
      void route.handler(req, res, next);
      return;
    }
    next();
  };
}
