/**
 * What a handler learns of an Open Service Broker call (`ctx.osb`), absent on the platform's
 * native calls. Self-contained: src/types.ts imports it.
 */

/** `X-Broker-API-Originating-Identity`, decoded: the platform and its JSON object about the user. */
export interface OriginatingIdentity {
  platform: string;
  value: Record<string, unknown>;
}

export interface OsbCall {
  /** The platform's id of the instance (`:instance_id`); the registry files it as `osb:<id>`. */
  instanceId: string;
  /** The platform's id of the binding (`:binding_id`), on binding calls. */
  bindingId?: string;
  /** The instance's name on the platform, from `context.instance_name` (or `context.name`) when sent. */
  instanceName?: string;
  /** The app of a binding, from `bind_resource.app_guid`, `app_guid` or `context.app_name`. */
  app?: string;
  /** The request's `context` object, as sent (`{}` when there is none). */
  context: Record<string, unknown>;
  originatingIdentity?: OriginatingIdentity;
  /** The platform sent `accepts_incomplete=true`: it polls `last_operation` for a 202. */
  acceptsIncomplete: boolean;
}
