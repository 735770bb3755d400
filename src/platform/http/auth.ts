/**
 * `Authorization: bearer <token>`: the platform takes the last word of the header, so a bare
 * token works too. Missing or unknown: 401 with the platform's challenge.
 */
import type { Request, RequestHandler } from "express";
import type { Context } from "../domain/context.js";
import { actorOf, userOfToken } from "../domain/users.js";
import { sendText } from "./handler.js";

export function bearerToken(req: Request): string | undefined {
  const words = (req.headers.authorization ?? "").trim().split(/\s+/);
  const token = words[words.length - 1];
  return token ? token : undefined;
}

export function authentication(context: Context): RequestHandler {
  return async (req, res, next) => {
    try {
      const token = bearerToken(req);
      const user = token === undefined ? undefined : await userOfToken(context, token);
      if (!user) {
        res.setHeader("WWW-Authenticate", 'Bearer realm="tsuru" scope="tsuru"');
        sendText(res, 401, "You must provide a valid Authorization header");
        return;
      }
      res.locals.actor = await actorOf(context, user.email);
      next();
    } catch (error) {
      next(error);
    }
  };
}
