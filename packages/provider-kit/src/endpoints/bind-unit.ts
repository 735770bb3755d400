/** POST /resources/:instance/bind (app-host, unit-host): one unit of an app → 201 env. */
import { sendBindEnv } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { bindUnitSchema } from "../schemas.js";

export const bindUnit = endpoint({
  schema: bindUnitSchema,
  run: (lifecycle, request, context) => lifecycle.bindUnit(request, context),
  answer: sendBindEnv,
});
