/** GET /resources/:instance → 200 `[{label, value}]`, or 404 when the handler returns nothing. */
import type { ServerResponse } from "node:http";
import { sendJson, sendText } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { instanceSchema } from "../schemas.js";
import type { InfoResult } from "../types.js";

function sendInfo(res: ServerResponse, result: InfoResult): void {
  if (result === null || result === undefined) return sendText(res, 404, "This instance has no extra info.");
  if (!Array.isArray(result)) throw new Error("The info handler must return an array of { label, value }, or nothing.");
  sendJson(res, 200, result.map((item) => ({ label: String(item.label), value: String(item.value) })));
}

export const info = endpoint({
  schema: instanceSchema,
  run: (lifecycle, request, context) => lifecycle.info(request, context),
  answer: sendInfo,
});
