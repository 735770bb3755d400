/** `GET /healthcheck/` (`WORKING`, or with `?check=all` one line per component) and `GET /info`. */
import { checkAll } from "../domain/health.js";
import { mayUse } from "../domain/services.js";
import { optionalActor } from "./auth.js";
import { query, sendJson, sendText, type Route } from "./handler.js";

export const healthReport: Route = async ({ req, res, context }) => {
  if (query(req, "check") !== "all") return sendText(res, 200, "WORKING");
  // Provider lines for a logged-in caller only, and only the services it may use.
  const actor = await optionalActor(context, req);
  const services = actor === undefined ? [] : (await context.store.all("services")).filter((service) => actor.admin || mayUse(actor, service));
  const report = await checkAll(context, services);
  sendText(res, report.working ? 200 : 500, `${report.lines.join("\n")}\n`);
};

export function info(version: string): Route {
  return async ({ res }) => sendJson(res, 200, { version });
}
