/**
 * GET /v2/service_instances/:instance_id/service_bindings/:binding_id → 200 `{}` when the binding
 * exists, 404 otherwise. Credentials are never kept (they are secrets): bindings are synchronous,
 * so OSB needs them only in the bind's answer.
 */
import { answer, checkOptionalIds, idOf, osbCallOf, queryOf, registryName, sendAnswer, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { OsbError } from "./errors.js";

interface FetchBindingRequest {
  instance: string;
  bindingId: string;
}

export function fetchBinding({ options }: OsbDeps): OsbCallDefinition<FetchBindingRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const bindingId = idOf(scope, "binding_id");
      // OSB 2.17 "Fetching a Service Binding": `service_id`, `plan_id` optional, non-empty when sent.
      checkOptionalIds(options, queryOf(req));
      osbCallOf(req, scope, instanceId, {});
      return { instance: registryName(instanceId), bindingId };
    },
    async run(registry, { instance, bindingId }) {
      const binding = await registry.store.getBinding(instance, "app", registryName(bindingId));
      if (binding === undefined) throw new OsbError(404, "NotFound", `Binding "${bindingId}" not found.`);
      return answer(200);
    },
    answer: sendAnswer,
  };
}
