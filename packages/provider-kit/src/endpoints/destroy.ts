/** DELETE /resources/:instance → 200. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { destroySchema } from "../schemas.js";

export const destroy = endpoint({
  schema: destroySchema,
  run: (lifecycle, request, context) => lifecycle.destroy(request, context),
  answer: (res) => sendEmpty(res, 200),
});
