/**
 * GET /v2/service_instances/:instance_id/service_bindings/:binding_id → 200 `{}` when the binding
 * exists, 404 otherwise. Credentials are never kept (they are secrets): bindings are synchronous,
 * so OSB needs them only in the bind's answer.
 */
import { answer, idOf, osbCallOf, registryName, sendAnswer, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { OsbError } from "./errors.js";

interface FetchBindingRequest {
  instance: string;
  bindingId: string;
}

export function fetchBinding({ store }: OsbDeps): OsbCallDefinition<FetchBindingRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const bindingId = idOf(scope, "binding_id");
      osbCallOf(req, scope, instanceId, {});
      return { instance: registryName(instanceId), bindingId };
    },
    async run(_lifecycle, { instance, bindingId }) {
      const binding = await store.getBinding(instance, "app", registryName(bindingId));
      if (binding === undefined) throw new OsbError(404, "NotFound", `Binding "${bindingId}" not found.`);
      return answer(200);
    },
    answer: sendAnswer,
  };
}
