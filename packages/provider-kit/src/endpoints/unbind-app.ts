/** DELETE /resources/:instance/bind-app (app-name, app-host, app-hosts*) → 200. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { unbindAppSchema } from "../schemas.js";

export const unbindApp = endpoint({
  schema: unbindAppSchema,
  run: (lifecycle, request, context) => lifecycle.unbindApp(request, context),
  answer: (res) => sendEmpty(res, 200),
});
