/** DELETE /resources/:instance/bind (app-host, unit-host) → 200. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { unbindUnitSchema } from "../schemas.js";

export const unbindUnit = endpoint({
  schema: unbindUnitSchema,
  run: (lifecycle, request, context) => lifecycle.unbindUnit(request, context),
  answer: (res) => sendEmpty(res, 200),
});
