/**
 * `POST /apps/<a>/run?once=<bool>`: the plain-text body runs with the app's environment.
 * Off unless the platform was started with --allow-run: it runs commands on this machine, as the
 * platform's OS user. Then only the members of the app's teams may run.
 */
import { forbidden } from "../domain/errors.js";
import { runCommand } from "../domain/run.js";
import { flag, nameParam, sendText, text, type Route } from "./handler.js";

export function runRoute(allowed: boolean): Route {
  return async ({ req, res, context, actor }) => {
    if (!allowed) {
      throw forbidden(
        "run is off: it runs commands on the platform's machine as the platform's OS user. " +
          "Start the platform with --allow-run to let the members of an app's teams run commands for it.",
      );
    }
    const once = flag(req, "once");
    const app = nameParam(req, "app", "app");
    const result = await runCommand(context, actor, app, text(req), once);
    const failedAt = result.exitCodes.findIndex((code) => code !== 0);
    if (failedAt === -1) return sendText(res, 200, result.output);
    const code = result.exitCodes[failedAt];
    const { timeoutMs, outputBytes } = context.config.run;
    const why = code === null ? `was stopped: it ran past ${timeoutMs / 1000} s or wrote more than ${outputBytes} bytes` : `exited with code ${code}`;
    sendText(res, 400, `${result.output}${result.output.endsWith("\n") || result.output === "" ? "" : "\n"}The command ${why}.`);
  };
}
