/**
 * `Authorization: bearer <credential>`: the platform takes the last word of the header, so a bare
 * token works too. A login token or an API key acts as its user; an app token (variant 2) acts
 * only on its own app's `/apps/<app>/...` routes (not on a bind route naming the app). Missing or
 * unknown: 401 with the challenge.
 */
import type { Request, RequestHandler } from "express";
import { appActor } from "../domain/app-tokens.js";
import type { Actor, Context } from "../domain/context.js";
import { actorOf, credentialOf } from "../domain/users.js";
import { sendText } from "./handler.js";

export function bearerToken(req: Request): string | undefined {
  const words = (req.headers.authorization ?? "").trim().split(/\s+/);
  const token = words[words.length - 1];
  return token ? token : undefined;
}

/** The user a bearer token speaks for, on a route open to anyone; undefined for anyone else. */
export async function optionalActor(context: Context, req: Request): Promise<Actor | undefined> {
  const token = bearerToken(req);
  const credential = token === undefined ? undefined : await credentialOf(context, token);
  return credential !== undefined && "user" in credential ? actorOf(context, credential.user.email) : undefined;
}

/** `/apps/<app>` and below (under any version prefix): the only routes an app token opens. */
const APP_ROUTE = /^(?:\/\d+\.\d+)?\/apps\/([^/]+)(?:\/|$)/;

function ownAppRoute(req: Request, app: string): boolean {
  return req.params.app === app && APP_ROUTE.exec(req.path)?.[1] === app;
}

export function tokenAuthentication(context: Context): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = bearerToken(req);
      const credential = token === undefined ? undefined : await credentialOf(context, token);
      if (credential && "user" in credential) res.locals.actor = await actorOf(context, credential.user.email);
      else if (credential && "app" in credential && ownAppRoute(req, credential.app)) res.locals.actor = await appActor(context, credential.app);
      else {
        res.setHeader("WWW-Authenticate", 'Bearer realm="tsuru" scope="tsuru"');
        sendText(res, 401, "You must provide a valid Authorization header");
        return;
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}
