/**
 * Custom actions' routes, `/resources/:instance<path>` and `/authenticated-resources<path>`, with
 * the contract's auth, body reading, timeout, error answers and log line (which names the
 * action). The request is the instance, the path's parameters, and the body and query as the
 * action's schemas read them; the answer is what the handler returned, as JSON (200), or 204
 * when it returned nothing.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type {
  ActionDeclaration,
  CheckedActionHandler,
  InstanceActionDeclaration,
  ProviderActions,
  ServiceActionDeclaration,
} from "../action-declarations.js";
import { bySpecificity } from "../actions.js";
import { sendEmpty, sendJson } from "../http/answer.js";
import { identifyCaller, mountCall, type Call, type EndpointDeps } from "../http/endpoint.js";
import type { Method, RouteEntry } from "../http/router.js";
import type { RequestScope } from "../http/scope.js";
import type { Lifecycle } from "../lifecycle/lifecycle.js";
import { validate, validateWith } from "../http/validate.js";
import { instanceSchema } from "../schemas.js";
import type { InstanceData } from "../types.js";

interface ActionInput {
  params: Record<string, string>;
  body: unknown;
  query: unknown;
}

/** The query string, repeated keys as lists. */
function queryOf(req: IncomingMessage): Record<string, string | string[]> {
  const url = req.url ?? "";
  const start = url.indexOf("?");
  const query = new Map<string, string | string[]>();
  if (start !== -1) {
    for (const [key, value] of new URLSearchParams(url.slice(start + 1))) {
      const before = query.get(key);
      query.set(key, before === undefined ? value : typeof before === "string" ? [before, value] : [...before, value]);
    }
  }
  // Own properties only, `__proto__` included: never the object's prototype.
  return Object.fromEntries(query);
}

const where = (what: string, field: string) => (path: readonly PropertyKey[]) =>
  path.length === 0 ? what : `${field} "${path.map(String).join(".")}"`;
const inBody = where("The request body", "Field");
const inQuery = where("The query string", "Query parameter");

/** The action's own messages are zod's sentences, not predicates: a colon joins them to the field. */
function inputOf(declaration: ActionDeclaration, req: IncomingMessage, scope: RequestScope, params: Record<string, string>): ActionInput {
  return {
    params,
    body: declaration.body === undefined ? {} : validateWith(declaration.body, scope.body ?? {}, inBody, ": "),
    query: declaration.query === undefined ? {} : validateWith(declaration.query, queryOf(req), inQuery, ": "),
  };
}

function answer(res: ServerResponse, result: unknown): void {
  if (result === undefined) sendEmpty(res, 204);
  else sendJson(res, 200, result);
}

const NO_REGISTRY =
  "ctx.keepData keeps data on the instance record, and the registry is off (registry: false): turn it on, or keep the data yourself.";

function instanceCall(declaration: InstanceActionDeclaration, handler: CheckedActionHandler): Call<ActionInput & { instance: string }, unknown> {
  return {
    parse(req, scope) {
      scope.action = declaration.name;
      scope.instance = scope.params.instance;
      identifyCaller(req, scope);
      const { instance, ...params } = scope.params;
      return { ...validate(instanceSchema, { instance }, scope.encoding), ...inputOf(declaration, req, scope, params) };
    },
    run: (lifecycle, request, context) =>
      lifecycle.instanceAction(request.instance, declaration.lock, context, async (handlerContext) => {
        if (!declaration.lock) return { result: await handler(request as never, handlerContext as never) };
        let data: InstanceData | undefined;
        const keepData = (kept: InstanceData): void => {
          if (lifecycle.store === undefined) throw new Error(NO_REGISTRY);
          data = { ...data, ...kept };
        };
        const result = await handler(request as never, Object.assign(handlerContext, { keepData }) as never);
        return { result, data };
      }),
    answer,
  };
}

function serviceCall(declaration: ServiceActionDeclaration, handler: CheckedActionHandler): Call<ActionInput, unknown> {
  return {
    parse(req, scope) {
      scope.action = declaration.name;
      identifyCaller(req, scope);
      return inputOf(declaration, req, scope, { ...scope.params });
    },
    run: async (_lifecycle, request, context) => handler(request as never, context as never),
    answer,
  };
}

const PREFIX = { instance: "/resources/:instance", service: "/authenticated-resources" } as const;

/** The routes of checked actions (see `checkActions`), the more specific pattern first. */
export function actionRoutes(actions: ProviderActions | undefined, deps: EndpointDeps): RouteEntry[] {
  if (actions === undefined) return [];
  return Object.entries(actions.declarations)
    .sort(([, a], [, b]) => bySpecificity(a, b))
    .map(([key, declaration]) => {
      const handler = actions.handlers[key] as CheckedActionHandler;
      const call = declaration.kind === "instance" ? instanceCall(declaration, handler) : serviceCall(declaration, handler);
      return {
        method: declaration.method.toLowerCase() as Method,
        path: PREFIX[declaration.kind] + declaration.path,
        handler: mountCall<ActionInput, unknown, Lifecycle>(call, deps),
      };
    });
}
