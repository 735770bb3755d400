/**
 * GET /v2/service_instances/:instance_id/last_operation → the registry's state of the instance:
 * provisioning or being removed is `in progress` (described by the step's latest progress message,
 * else its last failed attempt, if any),
 * ready is `succeeded`, failed is `failed` with the reason. An instance that is gone is 410 for a
 * removal (the platform forgets it), 404 otherwise.
 */
import type { InstanceRecord } from "../types.js";
import { answer, idOf, osbCallOf, queryOf, registryName, sendAnswer, type OsbAnswer, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { DEPROVISION_OPERATION } from "./deprovision.js";
import { OsbError } from "./errors.js";
import { PROVISION_OPERATION } from "./provision.js";

interface LastOperationRequest {
  instanceId: string;
  instance: string;
  operation: string | undefined;
}

/** OSB's `description` must be non-empty when present. */
function stateOf(record: InstanceRecord): OsbAnswer {
  const withReason = (state: string, fallback: string) => answer(200, { state, description: record.reason ?? fallback });
  const inProgress = (fallback: string) => answer(200, { state: "in progress", description: record.step?.progress ?? record.reason ?? fallback });
  switch (record.state) {
    case "provisioning":
      return inProgress("Provisioning the instance.");
    case "deleting":
      return inProgress("Removing the instance.");
    case "failed":
      return withReason("failed", "The instance failed.");
    case "ready":
    case "updating":
      return answer(200, { state: "succeeded", description: "The instance is ready." });
  }
}

export function lastOperation({ store }: OsbDeps): OsbCallDefinition<LastOperationRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      osbCallOf(req, scope, instanceId, {});
      return { instanceId, instance: registryName(instanceId), operation: queryOf(req).get("operation") ?? undefined };
    },
    async run(_lifecycle, request) {
      const record = await store.getInstance(request.instance);
      if (record !== undefined) return stateOf(record);
      if (request.operation === PROVISION_OPERATION) throw new OsbError(404, "NotFound", `Instance "${request.instanceId}" not found.`);
      // Removed, or never made: either way the platform may forget it.
      if (request.operation === undefined || request.operation === DEPROVISION_OPERATION) return answer(410);
      throw new OsbError(400, "BadRequest", `operation "${request.operation}" is not one this broker returned.`);
    },
    answer: sendAnswer,
  };
}
