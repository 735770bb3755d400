/**
 * GET /v2/service_instances/:instance_id → 200 `{service_id, plan_id, parameters}` from the
 * registry; 404 while it does not exist or is still provisioning, 422 ConcurrencyError while it
 * is being updated.
 */
import { answer, checkOptionalIds, idOf, osbCallOf, queryOf, registryName, sendAnswer, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { concurrencyError, OsbError } from "./errors.js";

interface FetchRequest {
  instanceId: string;
  instance: string;
}

export function fetchInstance({ options }: OsbDeps): OsbCallDefinition<FetchRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      // OSB 2.17 "Fetching a Service Instance": `service_id`, `plan_id` optional, non-empty when sent.
      checkOptionalIds(options, queryOf(req));
      osbCallOf(req, scope, instanceId, {});
      return { instanceId, instance: registryName(instanceId) };
    },
    async run(registry, { instanceId, instance }) {
      const record = await registry.store.getInstance(instance);
      if (record === undefined || record.state === "provisioning" || record.state === "deleting") {
        throw new OsbError(404, "NotFound", `Instance "${instanceId}" not found (or still being provisioned).`);
      }
      if (record.state === "updating") throw concurrencyError(`Instance "${instanceId}" is being updated; fetch it again in a moment.`);
      const planId = record.plan === undefined ? undefined : options.planIds.get(record.plan);
      return answer(200, { service_id: options.serviceId, ...(planId === undefined ? {} : { plan_id: planId }), parameters: record.parameters });
    },
    answer: sendAnswer,
  };
}
