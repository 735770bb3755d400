/**
 * The provider's own routes straight from `node:http`, with Express out of the request path
 * (`provider.listen()`, `provider.requestListener`). Express costs more per call than everything
 * the provider does (see docs/benchmarks.md), and the provider's middleware needs none of it.
 *
 * A request is served here only when nothing in it needs Express: its path is one Express reads
 * without `url.parse`, it matches one of the provider's routes, and (behind auth) it carries the
 * canonical header of accepted credentials. Everything else goes to the Express app untouched:
 * the user's own routes, 404s, 401s and every other spelling of Basic auth. Both ways run the
 * same middleware in the same order (scope, open routes, auth, body, guarded routes), so they give
 * the same answers byte for byte; test/http runs against both.
 */
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { errorAnswer } from "./errors.js";
import type { RouteTable, Middleware } from "./router.js";
import type { OpenScope } from "./scope.js";

export interface DirectParts {
  openScope: OpenScope;
  /** Routes served before auth (the healthcheck). */
  open: RouteTable;
  /** Routes served after auth and body parsing. */
  guarded: RouteTable;
  /** True when the request's credentials are admitted without Express; undefined: auth is off. */
  admits: ((req: IncomingMessage) => boolean) | undefined;
  body: Middleware;
  /** The Express app, for everything else. */
  express: RequestListener;
}

/** Characters for which Express's `req.path` goes through `url.parse` (parseurl's slow path). */
const NEEDS_URL_PARSE = /[\t\n\f\r #\u00a0\ufeff]/;

/** The path as Express's `req.path` reads it, for the URLs it reads without `url.parse`; else undefined. */
function plainPath(url: string): string | undefined {
  if (url.charCodeAt(0) !== 0x2f || NEEDS_URL_PARSE.test(url)) return undefined;
  const query = url.indexOf("?");
  return query === -1 ? url : url.slice(0, query);
}

/** What Express's final handler does with an error once the answer has begun: drop the connection. */
function dropConnection(req: IncomingMessage): void {
  req.socket.destroy();
}

/** Answers a failed middleware as the Express app's error answer does. */
export function failed(error: unknown, req: IncomingMessage, res: ServerResponse): void {
  errorAnswer(error, req, res, () => dropConnection(req));
}

export function directListener({ openScope, open, guarded, admits, body, express }: DirectParts): RequestListener {
  return (req, res) => {
    const path = plainPath(req.url ?? "");
    if (path === undefined) return express(req, res);
    const fail = (error: unknown): void => failed(error, req, res);
    const before = open.find(req.method, path);
    if (before !== undefined) {
      if (openScope(req, res, path)) open.run(before, req, res, fail);
      return;
    }
    const match = guarded.find(req.method, path);
    if (match === undefined || (admits !== undefined && !admits(req))) return express(req, res);
    if (!openScope(req, res, path)) return;
    body(req, res, (error) => {
      if (error !== undefined && error !== null) return fail(error);
      guarded.run(match, req, res, fail);
    });
  };
}
