/** `GET /healthcheck` → 200 `WORKING`, before auth: load balancers and the platform probe it bare. */
import type { RequestHandler } from "express";
import { sendText } from "./answer.js";
import { scopeOf } from "./scope.js";

export const HEALTHCHECK_PATH = "/healthcheck";

export const healthcheck: RequestHandler = (req, res, next) => {
  if ((req.method !== "GET" && req.method !== "HEAD") || req.path !== HEALTHCHECK_PATH) return next();
  scopeOf(req).route = HEALTHCHECK_PATH;
  sendText(res, 200, "WORKING");
};
