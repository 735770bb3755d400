/**
 * PUT /v2/service_instances/:instance_id/service_bindings/:binding_id → the native bind-app.
 * The registry files the binding under the app key `osb:<binding_id>` (`request.appName`), so
 * each binding has credentials of its own; the platform's app (`bind_resource.app_guid`,
 * `app_guid` or `context.app_name`) is `request.appHost` and `ctx.osb.app`. 201
 * `{credentials}` (the handler's environment); the same binding again, for the same app: 200 and
 * the handler's environment again; for another app: 409.
 */
import type { BindAppRequest } from "../types.js";
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
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface OsbBindRequest {
  bind: BindAppRequest;
  osb: OsbCall;
}

export function bind({ options, store }: OsbDeps): OsbCallDefinition<OsbBindRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const bindingId = idOf(scope, "binding_id");
      const body = bodyOf(scope);
      checkServiceId(options, body.service_id);
      planNamed(options, body.plan_id);
      const context = objectField(body, "context");
      const app = textField(objectField(body, "bind_resource").app_guid) ?? textField(body.app_guid) ?? textField(context.app_name);
      const osb: OsbCall = { ...osbCallOf(req, scope, instanceId, context), bindingId, ...(app === undefined ? {} : { app }) };
      return {
        bind: {
          instance: registryName(instanceId),
          appName: registryName(bindingId),
          ...(app === undefined ? {} : { appHost: app }),
          appHosts: [],
          appInternalHosts: [],
          parameters: nativeParameters(objectField(body, "parameters")),
          placement: { clusterAddresses: [] },
        },
        osb,
      };
    },
    async run(lifecycle, request, call) {
      if (!options.bindable) throw new OsbError(400, "BadRequest", "This broker's instances are not bindable (the catalog says bindable: false).");
      const { instance, appName, appHost } = request.bind;
      const before = await store.getBinding(instance, "app", appName!);
      if (before !== undefined && before.appHost !== appHost) {
        throw new OsbError(409, "Conflict", `Binding "${request.osb.bindingId}" exists already for another app.`);
      }
      const credentials = await lifecycle.bindApp(request.bind, withOsb(call, request.osb));
      return answer(before === undefined ? 201 : 200, { credentials });
    },
    answer: sendAnswer,
  };
}
