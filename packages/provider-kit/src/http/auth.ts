/**
 * HTTP Basic auth on every route but the healthcheck. The platform sends the manifest's
 * username or the service id, so several names are accepted with one password. Every name is
 * compared (no early exit) in constant time, so timing tells nothing about which part was wrong.
 * express-basic-auth splits the header on the first ':' only, so passwords may contain ':'.
 */
import { timingSafeEqual } from "node:crypto";
import type basicAuth from "express-basic-auth";
import type { IncomingMessage } from "node:http";
import { createRequire } from "node:module";
import type { RequestHandler } from "express";
import type { AuthOptions } from "../options.js";
import { scopeOf } from "./scope.js";

/**
 * True when `given` equals one of `accepted`. Every candidate is compared, each in time that
 * depends only on `given`'s length: neither which one matched nor their lengths show in the timing.
 */
function matchesAny(given: string, accepted: readonly Buffer[]): boolean {
  const bytes = Buffer.from(given);
  let matched = false;
  for (const candidate of accepted) {
    const sameLength = candidate.length === bytes.length;
    // A candidate of another length is replaced by `given` itself, so the work stays the same.
    if (timingSafeEqual(bytes, sameLength ? candidate : bytes) && sameLength) matched = true;
  }
  return matched;
}

const loadBasicAuth = () => createRequire(import.meta.url)("express-basic-auth") as typeof basicAuth;

export interface Authentication {
  /** True for the canonical header of accepted credentials: admitted without further work. */
  admits(req: IncomingMessage): boolean;
  /** The whole check as Express middleware: anything `admits` refuses goes through express-basic-auth. */
  check: RequestHandler;
}

export function authentication({ usernames, password, realm }: Required<AuthOptions>): Authentication {
  const acceptedUsers = usernames.map((name) => Buffer.from(name));
  const acceptedPassword = [Buffer.from(password)];
  // express-basic-auth is loaded on the first request `admits` refuses: the platform's calls
  // never need it, so a provider does not load it at start-up.
  let checked: RequestHandler | undefined;
  const fullCheck = (): RequestHandler => (checked ??= loadBasicAuth()({
    challenge: true,
    realm,
    authorizer(givenUser: string, givenPassword: string): boolean {
      const userMatches = matchesAny(givenUser, acceptedUsers);
      const passwordMatches = matchesAny(givenPassword, acceptedPassword);
      return userMatches && passwordMatches;
    },
    unauthorizedResponse(req) {
      // express-basic-auth sends strings with res.send, which would default to text/html.
      req.res?.type("text/plain; charset=utf-8");
      const reason =
        req.auth === undefined
          ? "Authentication required: send the service's user name and password with HTTP Basic auth."
          : "Wrong user name or password for this provider: check the service manifest's username and password.";
      scopeOf(req).reason = reason;
      return reason;
    },
  }));

  // The platform (Go's SetBasicAuth) always sends the canonical header, so comparing the whole
  // header against the few accepted ones, in constant time, admits it without decoding it on
  // every call. Anything else (other spelling, wrong credentials) goes through the full check.
  const acceptedHeaders = usernames.map((name) => Buffer.from(`Basic ${Buffer.from(`${name}:${password}`).toString("base64")}`));
  const admits = (req: IncomingMessage): boolean => {
    const header = req.headers.authorization;
    return header !== undefined && matchesAny(header, acceptedHeaders);
  };
  return {
    admits,
    check: (req, res, next) => (admits(req) ? next() : fullCheck()(req, res, next)),
  };
}
