/** `/users`: sign up, log in and out, who am I, password, removal, keys and the API key. */
import { z } from "zod";
import { addKey, apiKeyOf, changePassword, listKeys, regenerateApiKey, removeKey, removeUser, resetPassword } from "../domain/account.js";
import type { Request } from "express";
import type { Context } from "../domain/context.js";
import { forbidden } from "../domain/errors.js";
import { actorOf, createUser, login, logout } from "../domain/users.js";
import { body, nameParam, query, sendEmpty, sendJson, type Route } from "./handler.js";
import { bearerToken, optionalActor } from "./auth.js";

const SIGN_UP = z.object({ email: z.string(), password: z.string() });
const LOGIN = z.object({ password: z.string().nullish() });
const NEW_PASSWORD = z.object({ old: z.string().max(100).nullish(), new: z.string().max(100).nullish() });
const KEY = z.object({ key: z.string(), name: z.string().max(100).optional() });
/** The spec removes a key by its content; today's client by its name. */
const KEY_REF = z.object({ key: z.string().optional(), name: z.string().max(100).optional() });

/**
 * Open to anyone with --open-signup; otherwise the admin creates users, with its token. `created`:
 * the spec's 200, or 201 on today's client's versioned route, as `createUser` answers.
 */
export function signUp(open: boolean, created: 200 | 201): Route {
  return async ({ req, res, context }) => {
    if (!open && !(await sentByAdmin(context, req))) {
      throw forbidden(
        "Sign-up is closed on this platform: ask its admin to create your user (POST /users with the admin's token, " +
          "or the console's Users form), or start the platform with --open-signup.",
      );
    }
    const { email, password } = body(req, SIGN_UP);
    await createUser(context, email, password);
    sendEmpty(res, created);
  };
}

async function sentByAdmin(context: Context, req: Request): Promise<boolean> {
  return (await optionalActor(context, req))?.admin === true;
}

export const logIn: Route = async ({ req, res, context }) => {
  const { password } = body(req, LOGIN);
  const email = nameParam(req, "email", "email");
  const token = await login(context, email, password ?? "", req.socket.remoteAddress ?? "unknown");
  sendJson(res, 200, { token, is_admin: (await actorOf(context, email)).admin });
};

export const logOut: Route = async ({ req, res, context }) => {
  await logout(context, bearerToken(req)!);
  sendEmpty(res, 200);
};

export const userInfo: Route = async ({ res, actor }) => {
  sendJson(res, 200, { Email: actor.email, Teams: actor.teams });
};

export const passwordReset: Route = async ({ req, res, context }) => {
  await resetPassword(context, nameParam(req, "email", "email"), query(req, "token"));
  sendEmpty(res, 200);
};

export const passwordChange: Route = async ({ req, res, context, actor }) => {
  const given = body(req, NEW_PASSWORD);
  await changePassword(context, actor, given.old ?? "", given.new ?? "");
  sendEmpty(res, 200);
};

export const userRemove: Route = async ({ res, context, actor }) => {
  await removeUser(context, actor);
  sendEmpty(res, 200);
};

export const keyList: Route = async ({ res, context, actor }) => {
  sendJson(res, 200, await listKeys(context, actor));
};

export const keyAdd: Route = async ({ req, res, context, actor }) => {
  const { key, name } = body(req, KEY);
  await addKey(context, actor, key, name);
  sendEmpty(res, 200);
};

export const keyRemove: Route = async ({ req, res, context, actor }) => {
  const { key, name } = body(req, KEY_REF);
  await removeKey(context, actor, key ?? name ?? "");
  sendEmpty(res, 200);
};

export const apiKeyShow: Route = async ({ res, context, actor }) => {
  sendJson(res, 200, await apiKeyOf(context, actor));
};

export const apiKeyRegenerate: Route = async ({ res, context, actor }) => {
  sendJson(res, 200, { token: await regenerateApiKey(context, actor), users: actor.email });
};
