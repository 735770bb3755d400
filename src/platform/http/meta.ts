/** `GET /healthcheck/` (`WORKING`, or with `?check=all` one line per component) and `GET /info`. */
import { checkAll } from "../domain/health.js";
import { query, sendJson, sendText, type Route } from "./handler.js";

export const healthcheck: Route = async ({ req, res, context }) => {
  if (query(req, "check") !== "all") return sendText(res, 200, "WORKING");
  const report = await checkAll(context);
  sendText(res, report.working ? 200 : 500, `${report.lines.join("\n")}\n`);
};

export function info(version: string): Route {
  return async ({ res }) => sendJson(res, 200, { version });
}
