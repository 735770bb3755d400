/**
 * The Open Service Broker API v2.17 as routes of the provider's own route table: behind the same
 * request scope, auth, body reading, timeout, log line and metrics as the native routes, on the
 * same lifecycle (registry, locks, background steps). Each call checks `X-Broker-API-Version`
 * first and answers its errors as OSB does (`errors.ts`).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ConfigurationError } from "../errors.js";
import { mountCall, type EndpointDeps } from "../http/endpoint.js";
import type { Method, RouteEntry, RouteHandler } from "../http/router.js";
import type { ProviderHandlers } from "../types.js";
import { bind } from "./bind.js";
import { checkVersion, type OsbCallDefinition, type OsbDeps } from "./call.js";
import { catalog } from "./catalog.js";
import { deprovision } from "./deprovision.js";
import { osbErrorAnswer } from "./errors.js";
import { fetchBinding } from "./fetch-binding.js";
import { fetchInstance } from "./fetch-instance.js";
import { lastOperation } from "./last-operation.js";
import type { ResolvedOsbOptions } from "./options.js";
import { provision } from "./provision.js";
import { unbind } from "./unbind.js";
import { update } from "./update.js";

const INSTANCE = "/v2/service_instances/:instance_id";
const BINDING = `${INSTANCE}/service_bindings/:binding_id`;
const REQUEST_IDENTITY = "x-broker-api-request-identity";

/** The platform's request identity, echoed as OSB recommends (the provider's own request id header is set too). */
function echoRequestIdentity(req: IncomingMessage, res: ServerResponse): void {
  const identity = req.headers[REQUEST_IDENTITY];
  if (typeof identity === "string" && /^[\x21-\x7e]{1,200}$/.test(identity)) res.setHeader("X-Broker-API-Request-Identity", identity);
}

function mountOsb<Req>(call: OsbCallDefinition<Req>, deps: EndpointDeps): RouteHandler {
  const parse: OsbCallDefinition<Req>["parse"] = (req, scope) => {
    checkVersion(req);
    return call.parse(req, scope);
  };
  const handler = mountCall({ ...call, parse }, deps);
  return (req, res, next) => {
    echoRequestIdentity(req, res);
    return handler(req, res, (error) => (error === undefined || error === null ? next() : osbErrorAnswer(error, req, res, next)));
  };
}

/** The OSB routes, for the provider's route table (they share no path with the native ones). */
export function osbRoutes(options: ResolvedOsbOptions, handlers: ProviderHandlers, deps: EndpointDeps): RouteEntry[] {
  const store = deps.lifecycle.store;
  if (store === undefined) throw new ConfigurationError("createProvider: osb needs the registry: pass registry: { store }.");
  const osbDeps: OsbDeps = { options, handlers, store };
  const route = <Req>(method: Method, path: string, call: OsbCallDefinition<Req>): RouteEntry => ({ method, path, handler: mountOsb(call, deps) });
  return [
    route("get", "/v2/catalog", catalog(osbDeps)),
    route("get", `${INSTANCE}/last_operation`, lastOperation(osbDeps)),
    route("put", BINDING, bind(osbDeps)),
    route("delete", BINDING, unbind(osbDeps)),
    route("get", BINDING, fetchBinding(osbDeps)),
    route("put", INSTANCE, provision(osbDeps)),
    route("patch", INSTANCE, update(osbDeps)),
    route("delete", INSTANCE, deprovision(osbDeps)),
    route("get", INSTANCE, fetchInstance(osbDeps)),
  ];
}
