/**
 * GET /v2/service_instances/:instance_id/last_operation → the registry's state of the instance:
 * provisioning or being removed is `in progress` (described by the step's latest progress message,
 * else its last failed attempt, if any),
 * ready is `succeeded`, failed is `failed` with the reason. An instance that is gone is 410 when
 * its removal ended (the registry's tombstone: the platform forgets it), 404 when it never existed
 * (OSB 2.17 "Polling Last Operation for Service Instances", Response: "404 ... MUST be returned
 * if the Service Instance being polled does not exist"; 410 "Appropriate only for asynchronous
 * delete operations").
 */
import type { InstanceRecord } from "../types.js";
import {
  answer,
  checkOptionalIds,
  idOf,
  optionalText,
  osbCallOf,
  queryOf,
  registryName,
  sendAnswer,
  type OsbAnswer,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { DEPROVISION_OPERATION } from "./deprovision.js";
import { badRequest, OsbError } from "./errors.js";
import { PROVISION_OPERATION } from "./provision.js";

interface LastOperationRequest {
  instanceId: string;
  instance: string;
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

const OPERATIONS: ReadonlySet<string> = new Set([PROVISION_OPERATION, DEPROVISION_OPERATION]);

export function lastOperation({ options }: OsbDeps): OsbCallDefinition<LastOperationRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const query = queryOf(req);
      // Query: `service_id`, `plan_id` and `operation` optional; when sent, non-empty and ours.
      checkOptionalIds(options, query);
      const operation = optionalText(query, "operation");
      if (operation !== undefined && !OPERATIONS.has(operation)) throw badRequest(`operation "${operation}" is not one this broker returned.`);
      osbCallOf(req, scope, instanceId, {});
      return { instanceId, instance: registryName(instanceId) };
    },
    async run(registry, request) {
      const found = await registry.lookup(request.instance);
      if (found === "removed") return answer(410);
      if (found === undefined) throw new OsbError(404, "NotFound", `Instance "${request.instanceId}" not found.`);
      return stateOf(found);
    },
    answer: sendAnswer,
  };
}
