/**
 * The provider's router: an Express Router whose every route, the provider's own and those added
 * on the provider (`provider.get(...)`, `provider.route(...)`), runs behind the same guard (request
 * scope, auth, body). The guard runs only once a route has matched, so a request no route serves
 * leaves the provider untouched: mounted at the root of another app, the parent's routes see no
 * auth, no body reading and no log line of the provider's.
 * Literal segments match case-sensitively, as the platform's own paths do (`/resources/Plans` is
 * the instance `Plans`, never the plan list); one trailing slash is allowed, HEAD is served by the
 * GET route, parameters are percent-decoded (an undecodable one is answered 400).
 */
import { METHODS, type IncomingMessage, type ServerResponse } from "node:http";
import type { IRoute, RequestHandler, Router } from "express";

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

type AddHandlers = (...handlers: RequestHandler[]) => IRoute;

/** Every way Express adds handlers to a route: one per HTTP method, and `all`. */
const ROUTE_METHODS = [...METHODS.map((method) => method.toLowerCase()), "all"];

/**
 * OPTIONS is no method of the provider's: out of the router before Express answers it with the
 * routes' methods, on to the 404 (or the parent app, mounted).
 */
export const leavingOptions: RequestHandler = (req, _res, next) => next(req.method === "OPTIONS" ? "router" : undefined);

/** From now on, every route added to `router` (by whoever adds it) runs `guard` before its own handlers. */
export function guardRoutes(router: Router, guard: readonly RequestHandler[]): void {
  const route = router.route.bind(router);
  router.route = (path: string) => {
    const added = route(path);
    const methods = added as unknown as Record<string, AddHandlers>;
    for (const method of ROUTE_METHODS) {
      const add = methods[method];
      if (add !== undefined) methods[method] = (...handlers) => add.call(added, ...guard, ...handlers);
    }
    return added;
  };
}
