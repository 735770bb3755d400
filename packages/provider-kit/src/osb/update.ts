/**
 * PATCH /v2/service_instances/:instance_id → the native update, which takes the full new state:
 * the registry merges what the request changes (`plan_id`, `parameters`) into the record it reads
 * under the instance lock (`updatePartly`), so two overlapping updates both keep their change.
 * Always synchronous: 200 `{}`. Without an update handler the catalog says
 * `plan_updateable: false`: an update that changes nothing is 200, any other 422 (OSB 2.17
 * "Updating a Service Instance", 422 "if the requested change is not supported").
 */
import { NotFoundError, ProviderError } from "../errors.js";
import type { InstanceChange } from "../lifecycle/registry.js";
import {
  answer,
  bodyOf,
  checkServiceId,
  idOf,
  nativeParameters,
  objectField,
  optionalText,
  osbCallOf,
  planNamed,
  registryName,
  requiredText,
  sendAnswer,
  withOsb,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface OsbUpdateRequest {
  change: InstanceChange;
  osb: OsbCall;
}

export function update({ options, handlers }: OsbDeps): OsbCallDefinition<OsbUpdateRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const body = bodyOf(scope);
      // OSB 2.17 "Updating a Service Instance", Body: `service_id` REQUIRED; without `plan_id` the plan MUST NOT change.
      checkServiceId(options, requiredText(body, "service_id"));
      const planId = optionalText(body, "plan_id");
      const change: InstanceChange = {
        instance: registryName(instanceId),
        ...(planId === undefined ? {} : { plan: planNamed(options, planId) }),
        ...(body.parameters === undefined ? {} : { parameters: nativeParameters(objectField(body, "parameters")) }),
      };
      return { change, osb: osbCallOf(req, scope, instanceId, objectField(body, "context")) };
    },
    async run(registry, request, call) {
      try {
        await registry.updatePartly(request.change, withOsb(call, request.osb));
      } catch (error) {
        if (error instanceof NotFoundError) throw new NotFoundError(`Instance "${request.osb.instanceId}" not found (or being removed).`);
        // A change to make, and no update handler to make it (the registry's "not supported").
        if (handlers.update === undefined && error instanceof ProviderError && error.status === 404) {
          throw new OsbError(422, "NotSupported", "This broker's instances cannot be updated (plan_updateable: false): send no plan_id or parameters that differ.");
        }
        throw error;
      }
      return answer(200);
    },
    answer: sendAnswer,
  };
}
