/**
 * PUT /v2/service_instances/:instance_id/service_bindings/:binding_id → the native bind-app.
 * The registry files the binding under the app key `osb:<binding_id>` (`request.appName`), so
 * each binding has credentials of its own; the platform's app (`bind_resource.app_guid`,
 * `app_guid` or `context.app_name`) is `request.appHost` and `ctx.osb.app`. 201
 * `{credentials}` (the handler's environment); the same binding again, for the same app, plan and
 * parameters: 200 and the handler's environment again; for another app, plan or parameters: 409
 * (OSB 2.17 "Binding", Response). The registry decides under the instance lock
 * (`bindAppOrRepeat`), so two concurrent binds of one id never both answer 201.
 */
import { AlreadyExistsError } from "../errors.js";
import type { BindAppRequest, BindingTerms } from "../types.js";
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
  textField,
  withOsb,
  type OsbCallDefinition,
  type OsbDeps,
} from "./call.js";
import { OsbError } from "./errors.js";
import type { OsbCall } from "./types.js";

interface OsbBindRequest {
  bind: BindAppRequest;
  terms: BindingTerms;
  osb: OsbCall;
}

export function bind({ options }: OsbDeps): OsbCallDefinition<OsbBindRequest> {
  return {
    parse(req, scope) {
      const instanceId = idOf(scope, "instance_id");
      const bindingId = idOf(scope, "binding_id");
      const body = bodyOf(scope);
      // OSB 2.17 "Binding", Body: `service_id` and `plan_id` REQUIRED.
      checkServiceId(options, requiredText(body, "service_id"));
      const plan = planNamed(options, requiredText(body, "plan_id"));
      const context = objectField(body, "context");
      const app = textField(objectField(body, "bind_resource").app_guid) ?? textField(body.app_guid) ?? textField(context.app_name);
      const osb: OsbCall = { ...osbCallOf(req, scope, instanceId, context), bindingId, ...(app === undefined ? {} : { app }) };
      const parameters = nativeParameters(objectField(body, "parameters"));
      return {
        bind: {
          instance: registryName(instanceId),
          appName: registryName(bindingId),
          ...(app === undefined ? {} : { appHost: app }),
          appHosts: [],
          appInternalHosts: [],
          parameters,
          placement: { clusterAddresses: [] },
        },
        terms: { plan, parameters },
        osb,
      };
    },
    async run(registry, request, call) {
      if (!options.bindable) throw new OsbError(400, "BadRequest", "This broker's instances are not bindable (the catalog says bindable: false).");
      try {
        const { created, env } = await registry.bindAppOrRepeat(request.bind, request.terms, withOsb(call, request.osb));
        return answer(created ? 201 : 200, { credentials: env });
      } catch (error) {
        if (!(error instanceof AlreadyExistsError)) throw error;
        throw new OsbError(409, "Conflict", `Binding "${request.osb.bindingId}" exists already for another app, plan or parameters.`);
      }
    },
    answer: sendAnswer,
  };
}
