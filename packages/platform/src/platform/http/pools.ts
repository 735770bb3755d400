/** `GET /pools`: per team of the user (admins: every team), the pools it may use. */
import { listPools } from "../domain/pools.js";
import { sendJson, type Route } from "./handler.js";

export const poolList: Route = async ({ res, context, actor }) => {
  sendJson(res, 200, await listPools(context, actor));
};
