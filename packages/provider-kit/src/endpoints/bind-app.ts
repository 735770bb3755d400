/** POST /resources/:instance/bind-app (app-name, app-host, app-hosts*, …) → 201 env of text values. */
import { sendBindEnv } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { bindAppSchema } from "../schemas.js";

export const bindApp = endpoint({
  schema: bindAppSchema,
  run: (lifecycle, request, context) => lifecycle.bindApp(request, context),
  answer: sendBindEnv,
});
