/** PUT /resources/:instance (the full new state) → 200; 404 when the provider has no `update`. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { updateSchema } from "../schemas.js";

export const update = endpoint({
  schema: updateSchema,
  run: (lifecycle, request, context) => lifecycle.update(request, context),
  answer: (res) => sendEmpty(res, 200),
});
