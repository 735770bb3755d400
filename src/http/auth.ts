/**
 * HTTP Basic auth on every route but the healthcheck. The platform sends the manifest's
 * username or the service id, so several names are accepted with one password. Every name is
 * compared (no early exit) with a constant-time compare, so timing tells nothing about which
 * part was wrong. express-basic-auth splits the header on the first ':' only, so passwords
 * may contain ':'.
 */
import basicAuth from "express-basic-auth";
import type { RequestHandler } from "express";
import type { AuthOptions } from "../options.js";

export function authentication({ usernames, password, realm }: Required<AuthOptions>): RequestHandler {
  return basicAuth({
    challenge: true,
    realm,
    authorizer(givenUser: string, givenPassword: string): boolean {
      let userMatches = false;
      for (const name of usernames) {
        if (basicAuth.safeCompare(givenUser, name)) userMatches = true;
      }
      const passwordMatches = basicAuth.safeCompare(givenPassword, password);
      return userMatches && passwordMatches;
    },
    unauthorizedResponse(req) {
      // express-basic-auth sends strings with res.send, which would default to text/html.
      req.res?.type("text/plain; charset=utf-8");
      return req.auth === undefined
        ? "Authentication required: send the service's user name and password with HTTP Basic auth."
        : "Wrong user name or password for this provider: check the service manifest's username and password.";
    },
  });
}
