/**
 * HTTP Basic auth on every route but the healthcheck, by express-basic-auth. The platform sends
 * the manifest's username or the service id, so several names are accepted with one password.
 * Every name is compared (no early exit) in constant time, so timing tells nothing about which
 * part was wrong. express-basic-auth splits the header on the first ':' only, so passwords may
 * contain ':'.
 */
import { timingSafeEqual } from "node:crypto";
import basicAuth from "express-basic-auth";
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

/** The 401's body for a reason: the native answer is the reason as plain text; another API's (OSB) may be a JSON object. */
export type UnauthorizedBody = (reason: string) => string | Record<string, string>;

const asText: UnauthorizedBody = (reason) => reason;

export function authentication({ usernames, password, realm }: Required<AuthOptions>, bodyFor: UnauthorizedBody = asText): RequestHandler {
  const acceptedUsers = usernames.map((name) => Buffer.from(name));
  const acceptedPassword = [Buffer.from(password)];
  return basicAuth({
    challenge: true,
    realm,
    authorizer(givenUser: string, givenPassword: string): boolean {
      const userMatches = matchesAny(givenUser, acceptedUsers);
      const passwordMatches = matchesAny(givenPassword, acceptedPassword);
      return userMatches && passwordMatches;
    },
    unauthorizedResponse(req: basicAuth.IBasicAuthedRequest) {
      // express-basic-auth sends strings with res.send, which would default to text/html (objects with res.json).
      // Its types say `auth` is always there; it is set only when the header could be read.
      const sentCredentials = (req as Partial<basicAuth.IBasicAuthedRequest>).auth !== undefined;
      const reason = sentCredentials
        ? "Wrong user name or password for this provider: check the service manifest's username and password."
        : "Authentication required: send the service's user name and password with HTTP Basic auth.";
      scopeOf(req).reason = reason;
      const body = bodyFor(reason);
      if (typeof body === "string") req.res?.type("text/plain; charset=utf-8");
      return body;
    },
  });
}
