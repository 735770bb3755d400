/** Variant B: POST /resources/:instance (hostname) binds the app known by that host → 201 env. */
import { sendBindEnv } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { bindHostnameSchema } from "../schemas.js";

export const bindHostname = endpoint({
  schema: bindHostnameSchema,
  run: (lifecycle, request, context) => lifecycle.bindApp(request, context),
  answer: sendBindEnv,
});
