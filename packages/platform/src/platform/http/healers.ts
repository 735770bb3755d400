/** `GET /healers` lists them; `GET /healers/<h>` runs one and answers what it did, one line each. */
import { listHealers, runHealer } from "../domain/healers.js";
import { badRequest } from "../domain/errors.js";
import { sendJson, sendText, type Route } from "./handler.js";

export const healerList: Route = async ({ res }) => {
  sendJson(res, 200, listHealers());
};

export const healerRun: Route = async ({ req, res, context, actor }) => {
  const name = String(req.params.healer ?? "");
  if (!/^[a-z][a-z-]{0,40}$/.test(name)) throw badRequest(`Invalid healer name "${name.slice(0, 60)}".`);
  sendText(res, 200, `${(await runHealer(context, actor, name)).join("\n")}\n`);
};
