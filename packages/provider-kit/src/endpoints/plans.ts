/**
 * GET /resources/plans → 200 `[{name, description}]`; a handler's PoolRequiredError → 400 and the
 * JSON the platform reads as "ask the user for a pool" (src/contract.ts, POOL_REQUIRED).
 */
import type { ServerResponse } from "node:http";
import { z } from "zod";
import { poolRequiredBody, POOL_REQUIRED } from "../contract.js";
import { PoolRequiredError } from "../errors.js";
import { sendJson } from "../http/answer.js";
import { endpoint } from "../http/endpoint.js";
import { scopeOf } from "../http/scope.js";
import type { Plan } from "../types.js";

/** Only this error has another answer here: anything else goes on to the error answer. */
function poolRequiredOrThrow(error: unknown): PoolRequiredError {
  if (error instanceof PoolRequiredError) return error;
  throw error;
}

function askForPool(res: ServerResponse, error: PoolRequiredError): void {
  // A refusal: logged with its message, as the error answer logs the others.
  scopeOf(res.req).reason = error.message;
  sendJson(res, POOL_REQUIRED.status, poolRequiredBody(error.message));
}

export const plans = endpoint({
  schema: z.object({}),
  run: (lifecycle, _request, context): Promise<Plan[] | PoolRequiredError> => lifecycle.plans(context).catch(poolRequiredOrThrow),
  answer: (res, result) =>
    result instanceof PoolRequiredError
      ? askForPool(res, result)
      : sendJson(res, 200, result.map((plan) => ({ name: String(plan.name), description: String(plan.description ?? "") }))),
});
