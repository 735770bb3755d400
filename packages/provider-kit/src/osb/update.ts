/**
 * PATCH /v2/service_instances/:instance_id → the native update, which takes the full new state:
 * the plan (`plan_id`, or the instance's) and the parameters (`parameters`, or the instance's),
 * the rest as the registry holds it. Always synchronous: 200 `{}`. Without an update handler the
 * catalog says `plan_updateable: false` and this answers 422.
 */
import { NotFoundError } from "../errors.js";
import type { UpdateRequest } from "../types.js";
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
  withOsb,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface OsbUpdateRequest {
  instance: string;
  plan: string | undefined;
  parameters: Record<string, unknown> | undefined;
  osb: OsbCall;
}

export function update({ options, handlers, store }: OsbDeps): OsbCallDefinition<OsbUpdateRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const body = bodyOf(scope);
      checkServiceId(options, body.service_id);
      const plan = body.plan_id === undefined ? undefined : planNamed(options, body.plan_id);
      const parameters = body.parameters === undefined ? undefined : objectField(body, "parameters");
      return { instance: registryName(instanceId), plan, parameters, osb: osbCallOf(req, scope, instanceId, objectField(body, "context")) };
    },
    async run(lifecycle, request, call) {
      if (handlers.update === undefined) throw new OsbError(422, "NotSupported", "This broker's instances cannot be updated.");
      const record = await store.getInstance(request.instance);
      if (record === undefined) throw new NotFoundError(`Instance "${request.osb.instanceId}" not found.`);
      const full: UpdateRequest = {
        instance: request.instance,
        plan: request.plan ?? record.plan,
        team: record.team,
        tags: record.tags,
        description: record.description,
        parameters: request.parameters === undefined ? record.parameters : nativeParameters(request.parameters),
      };
      await lifecycle.update(full, withOsb(call, request.osb));
      return answer(200);
    },
    answer: sendAnswer,
  };
}
