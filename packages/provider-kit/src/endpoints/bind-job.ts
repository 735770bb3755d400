/** PUT /resources/:instance/binds/jobs/:job → 201 env of text values. */
import { sendBindEnv } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { bindJobSchema } from "../schemas.js";

export const bindJob = endpoint({
  schema: bindJobSchema,
  run: (lifecycle, request, context) => lifecycle.bindJob(request, context),
  answer: sendBindEnv,
});
