/** DELETE /resources/:instance/binds/jobs/:job → 200. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { unbindJobSchema } from "../schemas.js";

export const unbindJob = endpoint({
  schema: unbindJobSchema,
  run: (lifecycle, request, context) => lifecycle.unbindJob(request, context),
  answer: (res) => sendEmpty(res, 200),
});
