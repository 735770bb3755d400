/**
 * GET /resources/:instance/status: pending → 202, running → 204, `{down}` → 500 with the reason,
 * `{message}` → 200 with the text (the platform shows that body as the status).
 * `{pending}` → 202 with the step's progress as plain text. The rule followed: the written
 * interface says a 202 needs no body (provider-interface.md, status row: "202 pending ... no body
 * needed"), so a body is allowed, not owed; and bodies the platform shows are "short, human,
 * plain text" (contract-notes.md, Transport). Today's platform reads only the 202 and shows
 * "pending"; the local platform and other readers show the text too. Every text is made
 * printable, one line of at most STATUS_TEXT_MAX_LENGTH characters: terminals show it.
 */
import type { ServerResponse } from "node:http";
import { sendEmpty, sendText } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { printable, STATUS_TEXT_MAX_LENGTH } from "../printable.js";
import { instanceSchema } from "../schemas.js";
import type { StatusResult } from "../types.js";

const statusText = (text: unknown) => printable(String(text), { oneLine: true, maxLength: STATUS_TEXT_MAX_LENGTH });

function sendStatus(res: ServerResponse, result: StatusResult): void {
  if (result === "pending") return sendEmpty(res, 202);
  if (result === "running") return sendEmpty(res, 204);
  if (typeof result === "object" && result !== null) {
    if ("pending" in result) return sendText(res, 202, statusText(result.pending));
    if ("down" in result) return sendText(res, 500, statusText(result.down));
    if ("message" in result) return sendText(res, 200, statusText(result.message));
  }
  throw new Error(`The status handler returned ${JSON.stringify(result)}; return "pending", { pending }, "running", { down } or { message }.`);
}

export const status = endpoint({
  schema: instanceSchema,
  run: (lifecycle, request, context) => lifecycle.status(request, context),
  answer: sendStatus,
});
