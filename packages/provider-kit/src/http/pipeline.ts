/**
 * Runs middleware in order as ONE router layer. Express matches and dispatches every layer on
 * every request; the provider's middleware (request scope, healthcheck, auth, body, routes) needs neither.
 */
import type { RequestHandler } from "express";

export function pipeline(...stack: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return done(error);
      const middleware = stack[index++];
      if (middleware === undefined) return done();
      try {
        middleware(req, res, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
