/** `/users`: sign up, log in and out, who am I. */
import { z } from "zod";
import { actorOf, createUser, login, logout } from "../domain/users.js";
import { body, nameParam, sendEmpty, sendJson, type Route } from "./handler.js";
import { bearerToken } from "./auth.js";

const SIGN_UP = z.object({ email: z.string(), password: z.string() });
const LOGIN = z.object({ password: z.string().nullish() });

export const signUp: Route = async ({ req, res, context }) => {
  const { email, password } = body(req, SIGN_UP);
  await createUser(context, email, password);
  sendEmpty(res, 200);
};

export const logIn: Route = async ({ req, res, context }) => {
  const { password } = body(req, LOGIN);
  const email = nameParam(req, "email", "email");
  const token = await login(context, email, password ?? "");
  sendJson(res, 200, { token, is_admin: (await actorOf(context, email)).admin });
};

export const logOut: Route = async ({ req, res, context }) => {
  await logout(context, bearerToken(req)!);
  sendEmpty(res, 200);
};

export const userInfo: Route = async ({ res, actor }) => {
  sendJson(res, 200, { Email: actor.email, Teams: actor.teams });
};
