/** `POST /tokens` (variant 2): `{client: <app>, export: <bool>}` -> the app token. Admins only. */
import { z } from "zod";
import { createAppToken } from "../domain/app-tokens.js";
import { badRequest } from "../domain/errors.js";
import { APP_NAME } from "../domain/model.js";
import { body, sendJson, type Route } from "./handler.js";

/** Form fields arrive as text: "true" / "false". */
const FLAG = z.union([z.boolean(), z.enum(["true", "false"]).transform((value) => value === "true")]);
const NEW_TOKEN = z.object({ client: z.string(), export: FLAG.optional() });

export const appTokenCreate: Route = async ({ req, res, context, actor }) => {
  const wanted = body(req, NEW_TOKEN);
  if (!APP_NAME.test(wanted.client)) throw badRequest(`Invalid app name "${wanted.client.slice(0, 60)}" in "client".`);
  sendJson(res, 200, await createAppToken(context, actor, wanted.client, wanted.export === true));
};
