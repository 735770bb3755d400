/** GET /resources/plans → 200 `[{name, description}]`. */
import { z } from "zod";
import { sendJson } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";

export const plans = endpoint({
  schema: z.object({}),
  run: (lifecycle, _request, context) => lifecycle.plans(context),
  answer: (res, result) =>
    sendJson(res, 200, result.map((plan) => ({ name: String(plan.name), description: String(plan.description ?? "") }))),
});
