/**
 * Runs middleware in order as ONE router layer. Express matches and dispatches every layer on
 * every request; the provider's steps (request scope, healthcheck, auth, body, routes) need neither.
 */
import type { RequestHandler } from "express";

export function pipeline(...steps: RequestHandler[]): RequestHandler {
  return (req, res, done) => {
    let index = 0;
    const next = (error?: unknown): void => {
      if (error !== undefined && error !== null) return done(error);
      const step = steps[index++];
      if (step === undefined) return done();
      try {
        step(req, res, next);
      } catch (thrown) {
        done(thrown);
      }
    };
    next();
  };
}
