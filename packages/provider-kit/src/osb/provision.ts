/**
 * PUT /v2/service_instances/:instance_id → the native create, on the registry name
 * `osb:<instance_id>`. 201 when it finished; 202 `{operation: "provision"}` when it goes on in the
 * background (the handler's `{ pending: true }`) and the platform accepts that; 422 AsyncRequired
 * when it does not (a plan of `osb.asyncPlans` is refused before anything is made; an unexpected
 * background create is removed again). Sent again: 200 when identical and finished, 202 while it
 * is still provisioning, 409 when plan, parameters or organization differ.
 */
import { isDeepStrictEqual } from "node:util";
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
  sendAnswer,
  textField,
  withOsb,
  type OsbAnswer,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { asyncRequired, concurrencyError, OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface ProvisionRequest {
  create: CreateRequest;
  osb: OsbCall;
}

export const PROVISION_OPERATION = "provision";

/** What makes two provisions of one id the same request. */
function sameRequest(record: InstanceRecord, request: CreateRequest): boolean {
  return record.plan === request.plan && record.team === request.team && isDeepStrictEqual(record.parameters, request.parameters);
}

function inProgress(osb: OsbCall): OsbAnswer {
  if (!osb.acceptsIncomplete) throw asyncRequired("Provisioning this instance");
  return answer(202, { operation: PROVISION_OPERATION });
}

export function provision({ options, store }: OsbDeps): OsbCallDefinition<ProvisionRequest> {
  /** The answer to a provision of an id the registry holds already. */
  async function again(request: ProvisionRequest): Promise<OsbAnswer> {
    const record = await store.getInstance(request.create.instance);
    if (record === undefined || record.state === "deleting") {
      throw concurrencyError(`Instance "${request.osb.instanceId}" is being removed; provision it again once that has finished.`);
    }
    if (!sameRequest(record, request.create)) {
      throw new OsbError(409, "Conflict", `Instance "${request.osb.instanceId}" exists already with another plan, organization or parameters.`);
    }
    return record.state === "ready" || record.state === "updating" ? answer(200) : inProgress(request.osb);
  }

  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const body = bodyOf(scope);
      checkServiceId(options, body.service_id);
      const plan = planNamed(options, body.plan_id);
      const context = objectField(body, "context");
      const osb = osbCallOf(req, scope, instanceId, context);
      if (options.asyncPlans.has(plan) && !osb.acceptsIncomplete) throw asyncRequired(`Plan "${plan}"`);
      const team = textField(body.organization_guid) ?? textField(context.organization_guid);
      return {
        create: {
          instance: registryName(instanceId),
          plan,
          ...(team === undefined ? {} : { team }),
          tags: [],
          parameters: nativeParameters(objectField(body, "parameters")),
        },
        osb,
      };
    },
    async run(lifecycle, request, call) {
      const context = withOsb(call, request.osb);
      try {
        await lifecycle.create(request.create, context);
      } catch (error) {
        if (error instanceof AlreadyExistsError) return again(request);
        throw error;
      }
      const record = await store.getInstance(request.create.instance);
      if (record?.state === "ready") return answer(201);
      if (request.osb.acceptsIncomplete) return answer(202, { operation: PROVISION_OPERATION });
      // The platform cannot wait for it: take it back (the removal runs once the provision step ends).
      await lifecycle.destroy({ instance: request.create.instance }, context);
      throw asyncRequired("Provisioning this instance");
    },
    answer: sendAnswer,
  };
}
