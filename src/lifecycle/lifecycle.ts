/**
 * The seam between HTTP and the service author's handlers. Endpoints call a `Lifecycle`;
 * it decides what the handlers see and which answers the framework gives by itself.
 *
 * `statelessLifecycle` passes calls straight to the handlers (`registry: false`);
 * the registry-backed lifecycle wraps it with state, locking and background steps.
 */
import { ProviderError } from "../errors.js";
import type {
  BindAppRequest,
  BindJobRequest,
  BindResult,
  BindUnitRequest,
  CreateRequest,
  DestroyRequest,
  HandlerContext,
  InfoResult,
  InstanceRequest,
  Plan,
  ProviderHandlers,
  StatusResult,
  UnbindAppRequest,
  UnbindJobRequest,
  UnbindUnitRequest,
  UpdateRequest,
} from "../types.js";

/** What an endpoint knows about the call: no registry record yet. */
export type RequestContext = Omit<HandlerContext, "record" | "binding">;

export interface Lifecycle {
  plans(context: RequestContext): Promise<Plan[]>;
  create(request: CreateRequest, context: RequestContext): Promise<void>;
  update(request: UpdateRequest, context: RequestContext): Promise<void>;
  destroy(request: DestroyRequest, context: RequestContext): Promise<void>;
  bindApp(request: BindAppRequest, context: RequestContext): Promise<BindResult>;
  unbindApp(request: UnbindAppRequest, context: RequestContext): Promise<void>;
  bindUnit(request: BindUnitRequest, context: RequestContext): Promise<BindResult>;
  unbindUnit(request: UnbindUnitRequest, context: RequestContext): Promise<void>;
  bindJob(request: BindJobRequest, context: RequestContext): Promise<BindResult>;
  unbindJob(request: UnbindJobRequest, context: RequestContext): Promise<void>;
  status(request: InstanceRequest, context: RequestContext): Promise<StatusResult>;
  info(request: InstanceRequest, context: RequestContext): Promise<InfoResult>;
  /** Stop background work and release the store. */
  close(): Promise<void>;
}

/** 404 for a route whose optional handler the author left out (never 405: see contract-notes). */
export function notSupported(what: string): ProviderError {
  return new ProviderError(`This provider does not support ${what}.`, 404);
}

function required<T>(handler: T | undefined, what: string): T {
  if (handler === undefined) throw notSupported(what);
  return handler;
}

/** Handlers called as they are: the author keeps state and throws the error classes. */
export function statelessLifecycle(handlers: ProviderHandlers): Lifecycle {
  const pendingNeedsRegistry = () =>
    new ProviderError(
      "The handler asked to finish in the background, but the registry is off (registry: false). " +
        "Turn the registry on, or finish the work before returning.",
    );
  return {
    plans: async (context) => required(handlers.plans, "listing plans")(context),
    async create(request, context) {
      const result = await handlers.create(request, context);
      if (result?.pending) throw pendingNeedsRegistry();
    },
    async update(request, context) {
      await required(handlers.update, "updating instances")(request, context);
    },
    async destroy(request, context) {
      const result = await handlers.destroy(request, context);
      if (result?.pending) throw pendingNeedsRegistry();
    },
    bindApp: async (request, context) => handlers.bindApp(request, context),
    unbindApp: async (request, context) => handlers.unbindApp(request, context),
    bindUnit: async (request, context) => required(handlers.bindUnit, "binding units")(request, context),
    unbindUnit: async (request, context) => required(handlers.unbindUnit, "unbinding units")(request, context),
    bindJob: async (request, context) => required(handlers.bindJob, "binding jobs")(request, context),
    unbindJob: async (request, context) => required(handlers.unbindJob, "unbinding jobs")(request, context),
    status: async (request, context) => required(handlers.status, "the status call")(request, context),
    info: async (request, context) => required(handlers.info, "extra info")(request, context),
    close: async () => {},
  };
}
