/**
 * What an endpoint is: a schema for its request, the lifecycle call, and the answer.
 * `mountEndpoint` supplies the shared mechanics around it: the input (path segments over body
 * fields, pool/cluster headers as a fallback), validation, the handler context and the timeout;
 * `mountCall` the last two for any route (custom actions too).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { z } from "zod";
import { HEADERS } from "../contract.js";
import type { Lifecycle, RequestContext } from "../lifecycle/lifecycle.js";
import type { CallPlacement } from "../types.js";
import { fieldsOf, type Fields } from "./fields.js";
import { callPlacement, placementHeaders } from "./placement.js";
import type { RouteHandler } from "./router.js";
import { scopeOf, type RequestScope } from "./scope.js";
import { LazyAbort } from "../lazy-abort.js";
import type { Deadlines, PendingCall } from "./timeout.js";
import { validate } from "./validate.js";

/**
 * Any route's call: how its typed request is read from the request and its scope (which it
 * also tells the instance and the caller), the work, and the answer.
 */
export interface Call<Req, Res, L extends Lifecycle = Lifecycle> {
  parse(req: IncomingMessage, scope: RequestScope): Req;
  run(lifecycle: L, request: Req, context: RequestContext): Promise<Res>;
  answer(res: ServerResponse, result: Res): void;
}

/** A contract route: its request is the body's fields and the path's segments, checked by `schema`. */
export interface Endpoint<Req, Res> extends Omit<Call<Req, Res>, "parse"> {
  schema: z.ZodType<Req>;
}

/** Declares an endpoint; the identity, there to infer `Req` and `Res` once for all three parts. */
export function endpoint<Req, Res>(definition: Endpoint<Req, Res>): Endpoint<Req, Res> {
  return definition;
}

export interface EndpointDeps<L extends Lifecycle = Lifecycle> {
  lifecycle: L;
  logger: Logger;
  /** The provider's handler timeout. */
  deadlines: Deadlines;
}

function textOrUndefined(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

const USER_HEADER = HEADERS.user.toLowerCase();
const EVENT_ID_HEADER = HEADERS.eventId.toLowerCase();

/** The platform user and event id its headers name; they are all an action's caller has. */
export function identifyCaller(req: IncomingMessage, scope: RequestScope): void {
  scope.user = textOrUndefined(req.headers[USER_HEADER]);
  scope.eventId = textOrUndefined(req.headers[EVENT_ID_HEADER]);
}

/** Path segments over body fields; the pool and cluster headers fill placement fields the body leaves out. */
function inputOf(req: IncomingMessage, params: RequestScope["params"], fields: Fields): Record<string, unknown> {
  const input: Record<string, unknown> = Object.assign({}, fields, params);
  const sent = placementHeaders(req);
  if (sent !== undefined) {
    for (const [field, value] of Object.entries(sent)) if (input[field] === undefined) input[field] = value;
  }
  return input;
}

/**
 * A contract call's request: its instance from the path or the body's `name`; its user and event
 * id from the headers on newer platforms, from body fields on older ones.
 */
function contractRequest<Req>(schema: z.ZodType<Req>): Call<Req, unknown>["parse"] {
  return (req, scope) => {
    scope.instance = textOrUndefined(scope.params.instance);
    identifyCaller(req, scope);
    const fields = fieldsOf(scope.body, scope.encoding);
    scope.instance ??= textOrUndefined(fields.name);
    scope.user ??= textOrUndefined(fields.user);
    scope.eventId ??= textOrUndefined(fields.eventId);
    return validate(schema, inputOf(req, scope.params, fields), scope.encoding);
  };
}

/** `signal` and `log` are built only when read: most handlers never read them. */
class CallContext implements RequestContext {
  readonly requestId: string;
  readonly user: string | undefined;
  readonly eventId: string | undefined;
  readonly deadline: number;
  readonly #req: IncomingMessage;
  readonly #scope: RequestScope;
  readonly #abort: LazyAbort;
  readonly #logger: Logger;
  readonly #deadlines: Deadlines;
  readonly #call: PendingCall;
  #log: Logger | undefined;
  #placement: CallPlacement | undefined;

  constructor(req: IncomingMessage, scope: RequestScope, abort: LazyAbort, logger: Logger, deadlines: Deadlines, call: PendingCall) {
    this.requestId = scope.requestId;
    this.user = scope.user;
    this.eventId = scope.eventId;
    this.deadline = Date.now() + deadlines.timeoutMs;
    this.#req = req;
    this.#scope = scope;
    this.#abort = abort;
    this.#logger = logger;
    this.#deadlines = deadlines;
    this.#call = call;
  }

  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get log(): Logger {
    return (this.#log ??= this.#logger.child({ requestId: this.requestId, instance: this.#scope.instance }));
  }

  get placement(): CallPlacement {
    return (this.#placement ??= callPlacement(this.#req));
  }

  throwIfAborted(): void {
    this.#abort.throwIfAborted();
  }

  claimAnswer(): boolean {
    return this.#deadlines.claim(this.#call);
  }

  waitingForLock(instance: string | undefined): void {
    this.#call.lockWait = instance;
  }
}

export function mountCall<Req, Res, L extends Lifecycle>(call: Call<Req, Res, L>, deps: EndpointDeps<L>): RouteHandler {
  return async (req, res, next) => {
    try {
      const scope = scopeOf(req);
      const request = call.parse(req, scope);
      const abort = new LazyAbort();
      const pending = deps.deadlines.start(abort, scope.requestId, next);
      const context = new CallContext(req, scope, abort, deps.logger, deps.deadlines, pending);
      let result: Res;
      try {
        result = await call.run(deps.lifecycle, request, context);
      } catch (error) {
        if (deps.deadlines.finish(pending)) throw error;
        return; // Past the deadline: the call was answered 500 already.
      }
      if (deps.deadlines.finish(pending)) call.answer(res, result);
    } catch (error) {
      next(error);
    }
  };
}

export function mountEndpoint<Req, Res>({ schema, run, answer }: Endpoint<Req, Res>, deps: EndpointDeps): RouteHandler {
  return mountCall({ parse: contractRequest(schema), run, answer }, deps);
}
