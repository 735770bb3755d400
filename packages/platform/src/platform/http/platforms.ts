/** `GET /platforms`: the platforms apps may use, as configured (`--platform`). */
import { sendJson, type Route } from "./handler.js";

export const platformList: Route = async ({ res, context }) => {
  sendJson(res, 200, context.config.platforms.map((name) => ({ Name: name })));
};
