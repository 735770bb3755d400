/**
 * GET /v2/catalog → 200 `{ services: [one offering] }`: its plans are what the plans handler
 * returns, each with the id `osb.planIds` gives it (ids never change, so none is made up).
 */
import { ProviderError } from "../errors.js";
import type { Plan } from "../types.js";
import { answer, sendAnswer, type OsbCallDefinition, type OsbDeps } from "./call.js";

export function catalog({ options, handlers }: OsbDeps): OsbCallDefinition<Record<string, never>> {
  const updatable = handlers.update !== undefined;
  const planOf = (plan: Plan) => {
    const name = String(plan.name);
    const id = options.planIds.get(name);
    if (id === undefined) {
      throw new ProviderError(`The plans handler returned the plan "${name}", which osb.planIds gives no catalog id: add it there.`);
    }
    return {
      id,
      name,
      // OSB requires a non-empty description; the native contract does not.
      description: String(plan.description ?? "") || name,
    };
  };
  return {
    parse: () => ({}),
    run: async (lifecycle, _request, context) => {
      const plans = await lifecycle.plans(context);
      return answer(200, {
        services: [
          {
            id: options.serviceId,
            name: options.serviceName,
            description: options.description,
            tags: options.tags,
            bindable: options.bindable,
            instances_retrievable: true,
            bindings_retrievable: options.bindable,
            plan_updateable: updatable,
            plans: plans.map(planOf),
          },
        ],
      });
    },
    answer: sendAnswer,
  };
}
