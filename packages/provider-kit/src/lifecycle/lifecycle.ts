/**
 * The seam between HTTP and the service author's handlers. Endpoints call a `Lifecycle`;
 * it decides what the handlers see and which answers the framework gives by itself.
 *
 * `statelessLifecycle` passes calls straight to the handlers (`registry: false`);
 * the registry-backed lifecycle (`registry.ts`) adds state, locking and background steps,
 * and shares `handlerFor` with it, so both answer a missing optional handler the same way.
 */
import { ProviderError } from "../errors.js";
import type { Store } from "./store.js";
import type {
  BindAppRequest,
  BindJobRequest,
  BindResult,
  BindUnitRequest,
  CreateRequest,
  DestroyRequest,
  HandlerContext,
  InfoResult,
  InstanceData,
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
export type RequestContext = Omit<HandlerContext, "record" | "binding"> & {
  /** Throws the abort reason once the handler timeout passed, without building `signal` to ask. */
  throwIfAborted(): void;
  /** When (`Date.now()` time) the handler timeout passes and the call answers 500. */
  readonly deadline: number;
  /**
   * Called once the outcome is known, before recording it: true when the platform will get this
   * call's own answer (the timeout no longer answers it), false when the timeout answered 500
   * already, so the platform believes the call failed.
   */
  claimAnswer(): boolean;
  /**
   * Says the call waits for that instance's lock (undefined: no longer): if its handler timeout
   * passes meanwhile, it answers 503 "another operation is still running", not the timeout's 500.
   */
  waitingForLock(instance: string | undefined): void;
};

export interface Lifecycle {
  /** The registry's store; absent without a registry. */
  readonly store?: Store;
  plans(context: RequestContext): Promise<Plan[]>;
  create(request: CreateRequest, context: RequestContext): Promise<void>;
  update(request: UpdateRequest, context: RequestContext): Promise<void>;
  destroy(request: DestroyRequest, context: RequestContext): Promise<void>;
  bindApp(request: BindAppRequest, context: RequestContext): Promise<BoundEnv>;
  unbindApp(request: UnbindAppRequest, context: RequestContext): Promise<void>;
  bindUnit(request: BindUnitRequest, context: RequestContext): Promise<BoundEnv>;
  unbindUnit(request: UnbindUnitRequest, context: RequestContext): Promise<void>;
  bindJob(request: BindJobRequest, context: RequestContext): Promise<BoundEnv>;
  unbindJob(request: UnbindJobRequest, context: RequestContext): Promise<void>;
  status(request: InstanceRequest, context: RequestContext): Promise<StatusResult>;
  info(request: InstanceRequest, context: RequestContext): Promise<InfoResult>;
  /**
   * A custom action's work on a ready instance, holding the instance lock when `lock`; the data it
   * kept is saved before the lock is released.
   */
  instanceAction<T>(instance: string, lock: boolean, context: RequestContext, work: ActionWork<T>): Promise<T>;
  /** Wait for the calls holding instance locks (bounded by their deadline plus the grace), then stop background work. */
  close(): Promise<void>;
}

/** A bind's answer as the platform reads it: text values only. */
export type BoundEnv = Record<string, string>;

/**
 * A bind handler's result as the platform's answer: 201 and a JSON object of text values. The
 * platform rejects numbers and empty bodies, so numbers and booleans become text and "nothing to
 * export" is `{}`. Converted before anything is recorded, so a result that cannot be an
 * environment answers 500 and records nothing. A malformed result is the provider author's bug:
 * a plain Error, so the details go to the log only.
 */
export function bindEnv(result: BindResult): BoundEnv {
  const env: BoundEnv = {};
  if (result === null || result === undefined) return env;
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new Error(`The bind handler returned ${Array.isArray(result) ? "an array" : typeof result}; return an object of environment variables, or nothing.`);
  }
  for (const key of Object.keys(result)) {
    const value: unknown = result[key];
    if (value === null || value === undefined) continue;
    if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") {
      throw new Error(`The bind handler returned a ${typeof value} for the variable "${key}"; values must be text, numbers or booleans.`);
    }
    env[key] = String(value);
  }
  return env;
}

/** A custom action's work: its answer, and what to keep on the instance record. */
export type ActionWork<T> = (context: HandlerContext) => Promise<{ result: T; data?: InstanceData }>;

/** 404 for a route whose optional handler the author left out (never 405: see contract-notes). */
function notSupported(what: string): ProviderError {
  return new ProviderError(`This provider does not support ${what}.`, 404);
}

type OptionalHandler = "plans" | "update" | "bindUnit" | "unbindUnit" | "bindJob" | "unbindJob" | "status" | "info";

const OPTIONAL_ROUTES: Record<OptionalHandler, string> = {
  plans: "listing plans",
  update: "updating instances",
  bindUnit: "binding units",
  unbindUnit: "unbinding units",
  bindJob: "binding jobs",
  unbindJob: "unbinding jobs",
  status: "the status call",
  info: "extra info",
};

/**
 * The author's handler for an optional route, or a 404 "not supported" error.
 * Both lifecycles answer a missing handler this one way.
 */
export function handlerFor<K extends OptionalHandler>(handlers: ProviderHandlers, name: K): NonNullable<ProviderHandlers[K]> {
  const handler = handlers[name];
  if (handler === undefined) throw notSupported(OPTIONAL_ROUTES[name]);
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
    plans: async (context) => handlerFor(handlers, "plans")(context),
    async create(request, context) {
      const result = await handlers.create(request, context);
      if (result?.pending) throw pendingNeedsRegistry();
    },
    async update(request, context) {
      await handlerFor(handlers, "update")(request, context);
    },
    async destroy(request, context) {
      const result = await handlers.destroy(request, context);
      if (result?.pending) throw pendingNeedsRegistry();
    },
    bindApp: async (request, context) => bindEnv(await handlers.bindApp(request, context)),
    unbindApp: async (request, context) => handlers.unbindApp(request, context),
    bindUnit: async (request, context) => bindEnv(await handlerFor(handlers, "bindUnit")(request, context)),
    unbindUnit: async (request, context) => handlerFor(handlers, "unbindUnit")(request, context),
    bindJob: async (request, context) => bindEnv(await handlerFor(handlers, "bindJob")(request, context)),
    unbindJob: async (request, context) => handlerFor(handlers, "unbindJob")(request, context),
    status: async (request, context) => handlerFor(handlers, "status")(request, context),
    info: async (request, context) => handlerFor(handlers, "info")(request, context),
    // No registry: no record to check or keep data on, no lock.
    instanceAction: async (_instance, _lock, context, work) => (await work(context)).result,
    close: async () => {},
  };
}
