/**
 * `POST /apps/<a>/run?once=<bool>`: the plain-text body runs with the app's environment.
 * Refused when the platform listens beyond loopback, unless it was started with --allow-run:
 * it runs commands on this machine.
 */
import { forbidden, badRequest } from "../domain/errors.js";
import { runCommand } from "../domain/run.js";
import { nameParam, query, sendText, text, type Route } from "./handler.js";

export function runRoute(allowed: boolean): Route {
  return async ({ req, res, context, actor }) => {
    if (!allowed) {
      throw forbidden("run is off: this platform listens beyond loopback and runs commands on its own machine. Start it with --allow-run to serve run anyway.");
    }
    const once = query(req, "once") ?? "false";
    if (once !== "true" && once !== "false") throw badRequest('once must be "true" or "false".');
    const app = nameParam(req, "app", "app");
    const result = await runCommand(context, actor, app, text(req), once === "true");
    const failedAt = result.exitCodes.findIndex((code) => code !== 0);
    if (failedAt === -1) return sendText(res, 200, result.output);
    const code = result.exitCodes[failedAt];
    const why = code === null ? "was stopped after 60 s" : `exited with code ${code}`;
    sendText(res, 400, `${result.output}${result.output.endsWith("\n") || result.output === "" ? "" : "\n"}The command ${why}.`);
  };
}
