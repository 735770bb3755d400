/** `GET /quota/<user>`: `{items, available}` (available -1: unlimited). */
import { showQuota } from "../domain/quota.js";
import { nameParam, sendJson, type Route } from "./handler.js";

export const quotaShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await showQuota(context, actor, nameParam(req, "user", "email")));
};
