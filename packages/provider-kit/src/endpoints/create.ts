/** POST /resources (name, plan, team, tags, description, parameters.*) → 201. */
import { sendEmpty } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { createSchema } from "../schemas.js";

export const create = endpoint({
  schema: createSchema,
  run: (lifecycle, request, context) => lifecycle.create(request, context),
  answer: (res) => sendEmpty(res, 201),
});
