/** `GET /healthcheck/` and `GET /info`. */
import { sendJson, sendText, type Route } from "./handler.js";

export const healthcheck: Route = async ({ res }) => sendText(res, 200, "WORKING");

export function info(version: string): Route {
  return async ({ res }) => sendJson(res, 200, { version });
}
