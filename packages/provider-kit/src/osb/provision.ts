/**
 * PUT /v2/service_instances/:instance_id → the native create, on the registry name
 * `osb:<instance_id>`. 201 when it finished; 202 `{operation: "provision"}` when it goes on in the
 * background (the handler's `{ pending: true }`) and the platform accepts that; 422 AsyncRequired
 * when it does not (a plan of `osb.asyncPlans` is refused before anything is made; an unexpected
 * background create is removed again). Sent again: 200 when identical and finished, 202 while it
 * is still provisioning, 409 when plan, parameters, organization or space differ (decided by the
 * registry under the instance lock: `createOrRepeat`).
 */
import { AlreadyExistsError } from "../errors.js";
import type { CreateRequest, InstanceRecord } from "../types.js";
import {
  answer,
  bodyOf,
  checkServiceId,
  idOf,
  nativeParameters,
  objectField,
  osbCallOf,
  planNamed,
  registryName,
  requiredText,
  sendAnswer,
  withOsb,
  type OsbAnswer,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { asyncRequired, concurrencyError, OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface ProvisionRequest {
  create: CreateRequest;
  terms: Record<string, string>;
  osb: OsbCall;
}

export const PROVISION_OPERATION = "provision";

function inProgress(osb: OsbCall): OsbAnswer {
  if (!osb.acceptsIncomplete) throw asyncRequired("Provisioning this instance");
  return answer(202, { operation: PROVISION_OPERATION });
}

/** The answer to a provision of an id the registry held already, for the same request (or being removed). */
function again(record: InstanceRecord, osb: OsbCall): OsbAnswer {
  if (record.state === "deleting") throw concurrencyError(`Instance "${osb.instanceId}" is being removed; provision it again once that has finished.`);
  return record.state === "ready" || record.state === "updating" ? answer(200) : inProgress(osb);
}

export function provision({ options }: OsbDeps): OsbCallDefinition<ProvisionRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const body = bodyOf(scope);
      // OSB 2.17 "Provisioning", Body: these four are REQUIRED (`*`), each "MUST be a non-empty string".
      checkServiceId(options, requiredText(body, "service_id"));
      const plan = planNamed(options, requiredText(body, "plan_id"));
      const team = requiredText(body, "organization_guid");
      const space = requiredText(body, "space_guid");
      const context = objectField(body, "context");
      const osb = osbCallOf(req, scope, instanceId, context);
      return {
        create: { instance: registryName(instanceId), plan, team, tags: [], parameters: nativeParameters(objectField(body, "parameters")) },
        // The organization is the native team; the space is kept for telling a repeat (OSB: 409 "with different attributes").
        terms: { space_guid: space },
        osb,
      };
    },
    async run(registry, request, call) {
      const context = withOsb(call, request.osb);
      let outcome;
      try {
        // A plan of `asyncPlans` the platform will not poll for is refused before anything is made; a repeat is still answered (409, 200).
        const mustPoll = options.asyncPlans.has(request.create.plan ?? "") && !request.osb.acceptsIncomplete;
        const refuseNew = mustPoll ? () => asyncRequired(`Plan "${request.create.plan}"`) : undefined;
        outcome = await registry.createOrRepeat(request.create, context, { terms: request.terms, ...(refuseNew && { refuseNew }) });
      } catch (error) {
        if (!(error instanceof AlreadyExistsError)) throw error;
        throw new OsbError(409, "Conflict", `Instance "${request.osb.instanceId}" exists already with another plan, organization, space or parameters.`);
      }
      if (!outcome.created) return again(outcome.record, request.osb);
      if (outcome.record.state === "ready") return answer(201);
      if (request.osb.acceptsIncomplete) return answer(202, { operation: PROVISION_OPERATION });
      // The platform cannot wait for it: take it back (the removal runs once the provision step ends).
      await registry.destroy({ instance: request.create.instance }, context);
      throw asyncRequired("Provisioning this instance");
    },
    answer: sendAnswer,
  };
}
