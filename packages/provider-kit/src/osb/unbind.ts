/**
 * DELETE /v2/service_instances/:instance_id/service_bindings/:binding_id?service_id&plan_id → the
 * native unbind-app of the app key `osb:<binding_id>`: 200 `{}`, or 410 when there is no such
 * binding (or instance).
 */
import type { UnbindAppRequest } from "../types.js";
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
import type { OsbCall } from "./types.js";

interface OsbUnbindRequest {
  unbind: UnbindAppRequest;
  osb: OsbCall;
}

export function unbind({ options }: OsbDeps): OsbCallDefinition<OsbUnbindRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const bindingId = idOf(scope, "binding_id");
      const query = queryOf(req);
      // OSB 2.17 "Unbinding", Query: `service_id` and `plan_id` REQUIRED.
      checkServiceId(options, requiredText(query, "service_id"));
      planNamed(options, requiredText(query, "plan_id"));
      const osb: OsbCall = { ...osbCallOf(req, scope, instanceId, {}), bindingId };
      return {
        unbind: { instance: registryName(instanceId), appName: registryName(bindingId), appHosts: [], placement: { clusterAddresses: [] } },
        osb,
      };
    },
    async run(registry, request, call) {
      const { instance, appName } = request.unbind;
      const binding = await registry.store.getBinding(instance, "app", appName!);
      if (binding === undefined) return answer(410);
      const osb: OsbCall = { ...request.osb, ...(binding.appHost === undefined ? {} : { app: binding.appHost }) };
      await registry.unbindApp({ ...request.unbind, ...(binding.appHost === undefined ? {} : { appHost: binding.appHost }) }, withOsb(call, osb));
      return answer(200);
    },
    answer: sendAnswer,
  };
}
