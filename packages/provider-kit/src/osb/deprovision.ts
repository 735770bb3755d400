/**
 * DELETE /v2/service_instances/:instance_id?service_id&plan_id → the native destroy. 200 `{}` when
 * the instance is gone; 202 `{operation: "deprovision"}` while its removal runs in the background
 * (the handler's `{ pending: true }`, or an instance still provisioning); 410 when there is no such
 * instance. An instance still provisioning is removed only for a platform that polls (422
 * AsyncRequired otherwise): its removal waits for the provision step.
 */
import { NotFoundError } from "../errors.js";
import type { DestroyRequest } from "../types.js";
import {
  answer,
  checkServiceId,
  idOf,
  osbCallOf,
  planNamed,
  queryOf,
  registryName,
  requiredText,
  sendAnswer,
  withOsb,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { asyncRequired } from "./errors.js";
import type { OsbCall } from "./types.js";

interface DeprovisionRequest {
  destroy: DestroyRequest;
  osb: OsbCall;
}

export const DEPROVISION_OPERATION = "deprovision";

const gone = () => answer(410);

export function deprovision({ options }: OsbDeps): OsbCallDefinition<DeprovisionRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const query = queryOf(req);
      // OSB 2.17 "Deprovisioning", Query: `service_id` and `plan_id` REQUIRED.
      checkServiceId(options, requiredText(query, "service_id"));
      planNamed(options, requiredText(query, "plan_id"));
      return { destroy: { instance: registryName(instanceId) }, osb: osbCallOf(req, scope, instanceId, {}) };
    },
    async run(registry, request, call) {
      const { instance } = request.destroy;
      const { acceptsIncomplete } = request.osb;
      const before = await registry.store.getInstance(instance);
      if (before === undefined) return gone();
      // A step owed (provisioning, or a removal under way): the removal ends in the background.
      if (!acceptsIncomplete && before.step !== undefined) {
        throw asyncRequired("Removing this instance");
      }
      try {
        await registry.destroy(request.destroy, withOsb(call, request.osb));
      } catch (error) {
        if (error instanceof NotFoundError) return gone();
        throw error;
      }
      const after = await registry.store.getInstance(instance);
      if (after === undefined) return answer(200);
      // A removal the handler left to the background: the platform that does not poll is told it is
      // done, and the registry retries it until it is.
      return acceptsIncomplete ? answer(202, { operation: DEPROVISION_OPERATION }) : answer(200);
    },
    answer: sendAnswer,
  };
}
