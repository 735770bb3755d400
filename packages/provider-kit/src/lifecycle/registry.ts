/**
 * The registry-backed lifecycle: instance state, bindings, locking and background steps.
 * The framework answers 404/409/412/202/204 from the registry by itself, so handlers only
 * do the resource work. The state machine and every automatic answer are in the README
 * section "lifecycle".
 */
import { isDeepStrictEqual } from "node:util";
import type { Logger } from "pino";
import type { StepMetrics } from "../metrics.js";
import { AlreadyExistsError, BadRequestError, NotFoundError, NotReadyError, ProviderError } from "../errors.js";
import type {
  BindAppRequest,
  BindingKind,
  BindingRecord,
  BindingTerms,
  BindJobRequest,
  BindResult,
  BindUnitRequest,
  CallPlacement,
  CreateRequest,
  DestroyRequest,
  HandlerContext,
  InfoResult,
  InstanceRecord,
  InstanceRequest,
  LifecycleResult,
  Plan,
  ProviderHandlers,
  StatusResult,
  UnbindAppRequest,
  UnbindJobRequest,
  UnbindUnitRequest,
  UpdateRequest,
  UpdateResult,
} from "../types.js";
import { bindEnv, handlerFor, statelessLifecycle, type ActionWork, type BoundEnv, type Lifecycle, type RequestContext } from "./lifecycle.js";
import { LAST_WRITE, REMOVAL, type BindingRef, type LockedInstance, type Store } from "./store.js";
import { resolveRegistryOptions, type RegistryOptions, type ResolvedRegistryOptions } from "./options.js";
import { newStep, StepRunner, type StepWork } from "./steps.js";

export type { RegistryOptions } from "./options.js";

/** What a create that may be a repeat found: the instance it made, or the one already there. */
interface CreateOutcome {
  created: boolean;
  record: InstanceRecord;
}

/** What a bind that may be a repeat did: `created` false when the binding was there already. */
interface BindOutcome {
  created: boolean;
  env: BoundEnv;
}

/** How `createOrRepeat` tells a repeat: `terms` it must ask for too; `refuseNew` refuses a free name. */
interface CreateRepeat {
  terms?: Record<string, string>;
  refuseNew?: () => Error;
}

/** An update of some fields: those given replace the instance's, the others stay as the record holds them under the lock. */
export type InstanceChange = Pick<UpdateRequest, "instance"> & Partial<Omit<UpdateRequest, "instance">>;

/**
 * The registry-backed lifecycle, with the questions an adapter (the OSB routes) asks it besides
 * the native calls; each is decided under the instance lock, never from a read made before it.
 */
export interface RegistryLifecycle extends Lifecycle {
  readonly store: Store;
  /**
   * Create, unless the name holds an instance already: the same request made it (plan, team,
   * tags, description, parameters, and `terms`, kept on the record), or it is being removed,
   * then that record, else `AlreadyExistsError` (409). With `refuseNew`, a free name is refused
   * with its error instead of created (a repeat is still answered).
   */
  createOrRepeat(request: CreateRequest, context: RequestContext, repeat: CreateRepeat): Promise<CreateOutcome>;
  /**
   * Bind, unless the app key is bound already: for the same app (`appHost`) and `terms`, the
   * bind handler runs again (`created` false), else `AlreadyExistsError` (409).
   */
  bindAppOrRepeat(request: BindAppRequest, terms: BindingTerms, context: RequestContext): Promise<BindOutcome>;
  /**
   * Update the fields `change` gives, the rest merged from the record under the lock (no
   * concurrent change is lost). A change to nothing is done without an update handler (the
   * handler runs when there is one: it may act on the call's context).
   */
  updatePartly(change: InstanceChange, context: RequestContext): Promise<void>;
  /** The instance's record; "removed" for one whose removal (asked for by the platform) ended in the last day; undefined otherwise. */
  lookup(instance: string): Promise<InstanceRecord | "removed" | undefined>;
}

/** Which binding a bind or unbind call is about, and what to remember of it. */
interface BindingTarget {
  kind: BindingKind;
  key: string;
  fields: Pick<BindingRecord, "appName" | "appHost" | "unitHost" | "jobName">;
}

/** A bind's own handler call, and the unbind that undoes it when the platform was told the bind failed. */
interface BindCalls {
  bind(context: HandlerContext): BindResult | Promise<BindResult>;
  /** Absent when the provider has no unbind handler for this kind (bind-unit without unbind-unit). */
  unbind: ((context: HandlerContext) => void | Promise<void>) | undefined;
}

/**
 * The key the registry files an app's binding under: its name, never its host (hosts change
 * with routers); Variant B sends only a hostname, which is then the key.
 */
export function appBindingKey(request: { appName?: string; appHost?: string }): string | undefined {
  return request.appName || request.appHost;
}

function appTarget(request: { appName?: string; appHost?: string }): BindingTarget {
  const key = appBindingKey(request);
  if (!key) throw new BadRequestError("The app is missing: send app-name (or, on the oldest platform, hostname).");
  return { kind: "app", key, fields: { appName: request.appName, appHost: request.appHost } };
}

/** The time as records keep it. */
function now(): string {
  return new Date().toISOString();
}

function notFound(instance: string): NotFoundError {
  return new NotFoundError(`Instance "${instance}" not found.`);
}

function found(record: InstanceRecord | undefined, instance: string): InstanceRecord {
  if (!record) throw notFound(instance);
  return record;
}

function alreadyExists(existing: InstanceRecord | undefined, instance: string): AlreadyExistsError {
  if (existing?.state === "deleting") {
    return new AlreadyExistsError(`Instance "${instance}" is still being removed; create it again once that has finished.`);
  }
  return new AlreadyExistsError(`An instance named "${instance}" already exists.`);
}

/** What makes two creates of one name the same request. */
function sameCreate(record: InstanceRecord, request: CreateRequest): boolean {
  const { plan, team, tags, description, parameters } = request;
  return record.plan === plan && record.team === team && record.description === description && isDeepStrictEqual(record.tags, tags) && isDeepStrictEqual(record.parameters, parameters);
}

/**
 * A record whose create the platform may not have been answered 201 for: as `create` keeps it
 * while its handler runs (provisioning, no background step yet), or its last write, sent but not
 * known to have landed (`createUnanswered`: Redis may run a write after the call gave up on it
 * and answered 503). Seen without the instance lock, that create may still be running; seen
 * under the lock, it ended (or its process died) without answering 201, so the platform got no
 * instance.
 */
function createUnfinished(record: InstanceRecord): boolean {
  return record.createUnanswered === true || (record.state === "provisioning" && record.step === undefined);
}

/**
 * What a handler gets: the call's context plus the registry's view. A class (no closures built
 * per call); the signal and the logger stay lazy accessors: most handlers use neither.
 */
class RegistryContext implements HandlerContext {
  readonly requestId: string;
  readonly user: string | undefined;
  readonly eventId: string | undefined;
  readonly osb: HandlerContext["osb"];
  readonly #call: RequestContext;
  readonly #lock: LockedInstance | undefined;
  #signal: AbortSignal | undefined;

  constructor(
    call: RequestContext,
    readonly record: InstanceRecord,
    lock?: LockedInstance,
    readonly binding?: BindingRecord,
  ) {
    this.requestId = call.requestId;
    this.user = call.user;
    this.eventId = call.eventId;
    this.osb = call.osb;
    this.#call = call;
    this.#lock = lock;
  }

  /** Aborts at the call's deadline, or when the instance lock the handler runs under is lost. */
  get signal(): AbortSignal {
    return (this.#signal ??= this.#lock ? AbortSignal.any([this.#call.signal, this.#lock.signal]) : this.#call.signal);
  }

  get log(): Logger {
    return this.#call.log;
  }

  get placement(): CallPlacement {
    return this.#call.placement;
  }
}

function handlerContext(context: RequestContext, record: InstanceRecord, lock?: LockedInstance, binding?: BindingRecord): HandlerContext {
  return new RegistryContext(context, record, lock, binding);
}

/** Bind and update need a working instance; say why this one is not. */
function refuseUnlessReady(record: InstanceRecord): void {
  switch (record.state) {
    case "provisioning":
      throw new NotReadyError(`Instance "${record.name}" is still being provisioned; try again in a moment.`);
    case "failed":
      throw new ProviderError(`Instance "${record.name}" failed: ${record.reason ?? "no reason recorded"}. Remove it and create it again.`);
    case "deleting":
      throw new NotFoundError(`Instance "${record.name}" is being removed.`);
    case "ready":
    case "updating": // only seen after a process died mid-update: the resource still works
      return;
  }
}

/** The background work of `pending` results: provision, and deprovision (or destroy) to remove. */
function stepWorks(handlers: ProviderHandlers): { provision: StepWork; deprovision: StepWork } {
  return {
    async provision(record, context) {
      if (!handlers.provision) throw missingStepHandler("provision", "create");
      return handlers.provision(record, context);
    },
    // A destroy that arrives while provisioning is queued; without a deprovision handler the
    // destroy handler itself then runs in the background.
    async deprovision(record, context) {
      if (handlers.deprovision) return handlers.deprovision(record, context);
      const result = await handlers.destroy(
        { instance: record.name },
        // In the background there is no call, so no call placement.
        { requestId: `deprovision:${record.name}`, signal: context.signal, log: context.log, record, placement: { clusterAddresses: [] } },
      );
      if (result?.pending) throw missingStepHandler("deprovision", "destroy");
    },
  };
}

function missingStepHandler(step: "provision" | "deprovision", by: "create" | "destroy"): ProviderError {
  return new ProviderError(
    `The ${by} handler returned { pending: true } but the provider has no ${step} handler to finish the work. ` +
      `Add handlers.${step}, or finish the work before returning.`,
  );
}

/** Keep what a create, update or destroy handler returned; true when it asked for a background step. */
function absorb(record: InstanceRecord, result: LifecycleResult): boolean {
  Object.assign(record.data, result?.data);
  record.updatedAt = now();
  return result?.pending === true;
}

function newRecord(request: CreateRequest, terms: Record<string, string> | undefined): InstanceRecord {
  const { instance, plan, team, tags, description, parameters } = request;
  const time = now();
  return { name: instance, plan, team, tags, description, parameters, state: "provisioning", data: {}, createdAt: time, updatedAt: time, ...(terms && { terms }) };
}

/**
 * The registry-backed lifecycle: one method per call, each holding the instance lock where the
 * call changes the instance; what they share (the lock, bind and unbind) is private below.
 */
class Registry implements RegistryLifecycle {
  readonly store: Store;
  readonly #handlers: ProviderHandlers;
  /** What needs no registry: the plans. */
  readonly #stateless: Lifecycle;
  readonly #settings: ResolvedRegistryOptions;
  readonly #log: Logger;
  readonly #runner: StepRunner;
  /** The calls holding or waiting for an instance lock: `close()` waits for them. */
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Retries of undone binds, waiting for their turn: `close()` drops them. */
  readonly #undoRetries = new Set<NodeJS.Timeout>();

  constructor(handlers: ProviderHandlers, options: RegistryOptions, log: Logger, stepMetrics: StepMetrics) {
    this.store = options.store;
    this.#handlers = handlers;
    this.#stateless = statelessLifecycle(handlers);
    this.#settings = resolveRegistryOptions(options);
    this.#log = log.child({ component: "registry" });
    this.#runner = new StepRunner(this.store, stepWorks(handlers), this.#settings, this.#log, stepMetrics);
    this.#runner.start();
    this.store.persistenceWarning?.().then(
      (warning) => warning && this.#log.warn(warning),
      () => {}, // the store unreachable, or CONFIG refused: the calls report the first, the second is not judged
    );
  }

  plans(context: RequestContext): Promise<Plan[]> {
    return this.#stateless.plans(context);
  }

  async create(request: CreateRequest, context: RequestContext): Promise<void> {
    // Fast answer for the common retry; the check under the lock is the one that counts.
    const taken = await this.store.getInstance(request.instance);
    if (taken && !createUnfinished(taken)) throw alreadyExists(taken, request.instance);
    await this.#create(request, context);
  }

  createOrRepeat(request: CreateRequest, context: RequestContext, repeat: CreateRepeat): Promise<CreateOutcome> {
    return this.#create(request, context, repeat);
  }

  /** Create the instance; with `repeat`, a name taken by the same request (or by one being removed) answers its record. */
  async #create(request: CreateRequest, context: RequestContext, repeat?: CreateRepeat): Promise<CreateOutcome> {
    const instance = request.instance;
    const outcome = await this.#locked(instance, context, async (held) => {
      // Under the lock, a create still at its first stage is one whose process died before
      // answering: the platform got no instance, so this create takes its place.
      const existing = held.record;
      if (existing && !createUnfinished(existing)) {
        const same = () => sameCreate(existing, request) && isDeepStrictEqual(existing.terms, repeat?.terms);
        if (repeat && (existing.state === "deleting" || same())) return { created: false, record: existing, stepQueued: false };
        throw repeat ? new AlreadyExistsError(`An instance named "${instance}" already exists with other settings.`) : alreadyExists(existing, instance);
      }
      if (repeat?.refuseNew) throw repeat.refuseNew();
      const record = newRecord(request, repeat?.terms);
      await held.saveInstance(record);
      let result: LifecycleResult;
      try {
        result = await this.#handlers.create(request, handlerContext(context, structuredClone(record), held));
        if (result?.pending && !this.#handlers.provision) throw missingStepHandler("provision", "create");
      } catch (error) {
        // The platform gets no instance, so neither does the registry.
        await held.deleteInstance();
        throw error;
      }
      const pending = absorb(record, result);
      if (!context.claimAnswer()) {
        // The handler timeout answered 500 meanwhile: the platform believes the create failed
        // and will never remove this instance, so undo what the handler made.
        this.#log.warn({ instance, requestId: context.requestId }, "create finished after its timeout answered 500; removing what it made");
        await this.#queueRemoval(record, held);
        return { created: true, record, stepQueued: true };
      }
      if (pending) record.step = newStep("provision", this.#settings.stepTimeLimitMs);
      else record.state = "ready";
      // Marked until this write is known to have landed: if the store gives up on it (503) and
      // runs it later, the platform's retry of the name must not find a finished instance.
      await held.saveInstance({ ...record, createUnanswered: true });
      // Landed: the answer is 201 whatever comes next. Clearing the mark is a courtesy to
      // readers of the store; a record left marked is still ready for every other call, and the
      // platform, holding this instance, never creates its name again.
      await held.saveInstance(record, LAST_WRITE).catch((error: unknown) => {
        this.#log.warn({ err: error, instance, requestId: context.requestId }, "could not clear the create's mark on a created instance; it stays marked");
      });
      return { created: true, record, stepQueued: pending };
    });
    if (outcome.stepQueued) this.#runner.run(instance);
    return { created: outcome.created, record: outcome.record };
  }

  update(request: UpdateRequest, context: RequestContext): Promise<void> {
    return this.#update(request.instance, () => request, context, false);
  }

  updatePartly(change: InstanceChange, context: RequestContext): Promise<void> {
    return this.#update(
      change.instance,
      (record) => ({
        instance: change.instance,
        plan: change.plan ?? record.plan,
        team: change.team ?? record.team,
        tags: change.tags ?? record.tags,
        description: change.description ?? record.description,
        parameters: change.parameters ?? record.parameters,
      }),
      context,
      true,
    );
  }

  /** The update handler with the request `requestFor` makes of the record read under the lock; `partly`: see `updatePartly`. */
  async #update(instance: string, requestFor: (record: InstanceRecord) => UpdateRequest, context: RequestContext, partly: boolean): Promise<void> {
    // A full update needs the handler: known before waiting for the lock.
    if (!partly) handlerFor(this.#handlers, "update");
    await this.#locked(instance, context, async (held) => {
      const before = found(held.record, instance);
      refuseUnlessReady(before);
      const request = requestFor(structuredClone(before));
      if (partly && !this.#handlers.update && sameCreate(before, request)) return;
      const handler = handlerFor(this.#handlers, "update");
      const record: InstanceRecord = { ...structuredClone(before), state: "updating", updatedAt: now() };
      await held.saveInstance(record);
      let result: UpdateResult;
      try {
        result = await handler(request, handlerContext(context, structuredClone(record), held));
      } catch (error) {
        await held.saveInstance({ ...before, state: "ready" });
        throw error;
      }
      if (!context.claimAnswer()) {
        // The platform was told the update failed and keeps the instance as it was: so does the registry.
        this.#lateSuccess(instance, context, "update", "the instance's record is restored as it was before the update");
        await held.saveInstance({ ...before, state: "ready" });
        return;
      }
      const { plan, team, tags, description, parameters } = request;
      Object.assign(record.data, result?.data);
      Object.assign(record, { plan, team, tags, description, parameters, state: "ready", updatedAt: now() });
      await held.saveInstance(record, LAST_WRITE);
    });
  }

  async destroy(request: DestroyRequest, context: RequestContext): Promise<void> {
    const instance = request.instance;
    const queued = await this.#locked(instance, context, async (held) => {
      const record = found(held.record, instance);
      if (record.state === "deleting") return false; // already on its way out
      if (record.step?.kind === "provision") {
        // The provision step may be running right now, here or elsewhere: removing the
        // resource under it would race. Queue the removal to run once that attempt ends.
        if (!context.claimAnswer()) return false; // answered 500: the platform keeps the instance, so does the registry
        await this.#queueRemoval(record, held);
        return true;
      }
      const result = await this.#handlers.destroy(request, handlerContext(context, structuredClone(record), held));
      const pending = result?.pending === true;
      if (pending && !this.#handlers.deprovision) throw missingStepHandler("deprovision", "destroy");
      if (!context.claimAnswer()) {
        // The platform was told the destroy failed and keeps the instance: so does the registry,
        // and the platform's retry runs destroy again (the handler must cope with a resource already gone).
        this.#lateSuccess(instance, context, "destroy", pending ? "its removal was not queued and the record is kept" : "the resource was destroyed but the record is kept");
        return false;
      }
      if (!absorb(record, result)) {
        await held.deleteInstance(REMOVAL);
        return false;
      }
      await this.#queueRemoval(record, held);
      return true;
    });
    if (queued) this.#runner.run(instance);
  }

  async bindApp(request: BindAppRequest, context: RequestContext): Promise<BoundEnv> {
    return (await this.#bindApp(request, context, undefined)).env;
  }

  bindAppOrRepeat(request: BindAppRequest, terms: BindingTerms, context: RequestContext): Promise<BindOutcome> {
    return this.#bindApp(request, context, terms);
  }

  #bindApp(request: BindAppRequest, context: RequestContext, terms: BindingTerms | undefined): Promise<BindOutcome> {
    const calls: BindCalls = {
      bind: (ctx) => this.#handlers.bindApp(request, ctx),
      // Only when the bind is undone: the unbind of what this bind made.
      unbind: (ctx) => {
        const { instance, appName, appHost, appHosts, placement } = request;
        return this.#handlers.unbindApp({ instance, appName, appHost, appHosts, placement }, ctx);
      },
    };
    return this.#bind(request.instance, appTarget(request), context, calls, terms);
  }

  unbindApp(request: UnbindAppRequest, context: RequestContext): Promise<void> {
    return this.#unbind(request.instance, appTarget(request), context, (ctx) => this.#handlers.unbindApp(request, ctx));
  }

  async bindUnit(request: BindUnitRequest, context: RequestContext): Promise<BoundEnv> {
    const handler = handlerFor(this.#handlers, "bindUnit");
    const unbind = this.#handlers.unbindUnit;
    const target: BindingTarget = {
      kind: "unit",
      key: request.unitHost,
      fields: { appName: request.appName, appHost: request.appHost, unitHost: request.unitHost },
    };
    return (await this.#bind(request.instance, target, context, { bind: (ctx) => handler(request, ctx), unbind: unbind && ((ctx) => unbind(request, ctx)) })).env;
  }

  unbindUnit(request: UnbindUnitRequest, context: RequestContext): Promise<void> {
    const handler = handlerFor(this.#handlers, "unbindUnit");
    const target: BindingTarget = { kind: "unit", key: request.unitHost, fields: {} };
    return this.#unbind(request.instance, target, context, (ctx) => handler(request, ctx));
  }

  async bindJob(request: BindJobRequest, context: RequestContext): Promise<BoundEnv> {
    const handler = handlerFor(this.#handlers, "bindJob");
    const unbind = this.#handlers.unbindJob;
    const { instance, jobName, placement } = request;
    const target: BindingTarget = { kind: "job", key: jobName, fields: { jobName } };
    const calls: BindCalls = { bind: (ctx) => handler(request, ctx), unbind: unbind && ((ctx) => unbind({ instance, jobName, placement }, ctx)) };
    return (await this.#bind(instance, target, context, calls)).env;
  }

  unbindJob(request: UnbindJobRequest, context: RequestContext): Promise<void> {
    const handler = handlerFor(this.#handlers, "unbindJob");
    const target: BindingTarget = { kind: "job", key: request.jobName, fields: {} };
    return this.#unbind(request.instance, target, context, (ctx) => handler(request, ctx));
  }

  async status(request: InstanceRequest, context: RequestContext): Promise<StatusResult> {
    const record = found(await this.store.getInstance(request.instance), request.instance);
    switch (record.state) {
      case "provisioning":
        return record.step?.progress ? { pending: record.step.progress } : "pending";
      case "failed":
        return { down: record.reason ?? "The instance failed." };
      case "deleting":
        return { down: record.step?.progress ? `The instance is being removed: ${record.step.progress}` : "The instance is being removed." };
      case "ready":
      case "updating":
        // With a status handler the resource itself is checked; otherwise the registry's word is enough.
        return this.#handlers.status ? this.#handlers.status(request, handlerContext(context, record)) : "running";
    }
  }

  async lookup(instance: string): Promise<InstanceRecord | "removed" | undefined> {
    const record = await this.store.getInstance(instance);
    if (record !== undefined) return record;
    return (await this.store.wasRemoved(instance)) ? "removed" : undefined;
  }

  async info(request: InstanceRequest, context: RequestContext): Promise<InfoResult> {
    const handler = handlerFor(this.#handlers, "info");
    const record = found(await this.store.getInstance(request.instance), request.instance);
    if (record.state === "deleting") throw notFound(request.instance);
    return handler(request, handlerContext(context, record));
  }

  async instanceAction<T>(instance: string, lock: boolean, context: RequestContext, work: ActionWork<T>): Promise<T> {
    if (!lock) {
      const record = found(await this.store.getInstance(instance), instance);
      refuseUnlessReady(record);
      return (await work(handlerContext(context, record))).result;
    }
    return this.#locked(instance, context, async (held) => {
      const record = found(held.record, instance);
      refuseUnlessReady(record);
      const { result, data } = await work(handlerContext(context, structuredClone(record), held));
      if (data !== undefined && !context.claimAnswer()) {
        // The platform was told the action failed: what it kept is not the instance's.
        this.#lateSuccess(instance, context, "action", "the data it kept is dropped");
      } else if (data !== undefined) {
        Object.assign(record.data, data);
        record.updatedAt = now();
        await held.saveInstance(record, LAST_WRITE);
      }
      return result;
    });
  }

  async close(): Promise<void> {
    for (const timer of this.#undoRetries) clearTimeout(timer);
    this.#undoRetries.clear();
    await Promise.allSettled(this.#inFlight);
    await this.#runner.stop();
  }

  /**
   * Run `work` holding the instance lock. A call whose caller gave up while it waited (the
   * handler timeout aborted its signal) does nothing: the platform already has its answer. The
   * lock is let go `lockGraceMs` after the handler timeout even if the handler never settles,
   * so a hung handler blocks its instance (and `close()`) for that long at most.
   */
  #locked<T>(instance: string, context: RequestContext, work: (locked: LockedInstance) => Promise<T>, binding?: BindingRef): Promise<T> {
    context.waitingForLock(instance);
    const call = this.store.withLock(
      instance,
      this.#settings.lockTimeoutMs,
      (held) => {
        context.waitingForLock(undefined);
        context.throwIfAborted();
        return work(held);
      },
      { binding, holdUntil: context.deadline + this.#settings.lockGraceMs },
    );
    return this.#track(call);
  }

  /** `close()` waits for `call`. */
  #track<T>(call: Promise<T>): Promise<T> {
    this.#inFlight.add(call);
    const forget = () => this.#inFlight.delete(call);
    call.then(forget, forget);
    return call;
  }

  /** The instance goes `deleting`, its removal a background step. */
  async #queueRemoval(record: InstanceRecord, held: LockedInstance): Promise<void> {
    record.state = "deleting";
    record.step = newStep("deprovision", this.#settings.stepTimeLimitMs);
    record.updatedAt = now();
    await held.saveInstance(record);
  }

  /**
   * The bind handler's result is converted before anything is recorded; the binding is recorded
   * only when the platform gets this call's answer. When it does not (the handler finished after
   * its timeout answered 500, or returned what cannot be an environment), the platform believes
   * the app unbound and never unbinds it: the unbind handler undoes the bind (`#undoBind`).
   * With `terms`, a binding already under the key must be for the same app and terms (else 409).
   */
  #bind(instance: string, target: BindingTarget, context: RequestContext, calls: BindCalls, terms?: BindingTerms): Promise<BindOutcome> {
    return this.#locked(
      instance,
      context,
      async (held) => {
        const record = found(held.record, instance);
        refuseUnlessReady(record);
        // A binding whose bind was not answered 2xx is none the platform holds: this bind is a first one.
        const before = held.binding?.bindUnanswered ? undefined : held.binding;
        if (terms !== undefined && before !== undefined && (before.appHost !== target.fields.appHost || !isDeepStrictEqual(before.terms, terms))) {
          throw new AlreadyExistsError(`"${target.key}" of instance "${instance}" is bound already, for another app or with other terms.`);
        }
        const result = await calls.bind(handlerContext(context, record, held, before));
        const time = now();
        const binding: BindingRecord = {
          ...before,
          ...target.fields,
          ...(terms === undefined ? {} : { terms }),
          instance,
          kind: target.kind,
          key: target.key,
          createdAt: before?.createdAt ?? time,
          updatedAt: time,
        };
        let env: BoundEnv;
        try {
          env = bindEnv(result);
        } catch (error) {
          // Answered 500: the platform believes the app unbound.
          this.#log.warn({ instance, requestId: context.requestId }, "bind returned what cannot be an environment; the unbind handler undoes it");
          await this.#undoBind(held, record, binding, calls, context);
          throw error;
        }
        if (!context.claimAnswer()) {
          this.#lateSuccess(instance, context, "bind", "the unbind handler undoes it");
          await this.#undoBind(held, record, binding, calls, context);
          return { created: before === undefined, env };
        }
        try {
          // Marked until this write is known to have landed: a store that gives up on it (503)
          // may still run it later, leaving a binding the platform was told failed.
          await held.saveBinding({ ...binding, bindUnanswered: true });
        } catch (error) {
          // Answered an error: the platform believes the app unbound, so the bind is undone (its
          // retries outlast the store's outage), unless the platform binds again first.
          this.#log.warn({ err: error, instance, requestId: context.requestId }, "could not record a bind; the unbind handler undoes it");
          await this.#undoBind(held, record, binding, calls, context);
          throw error;
        }
        // Landed: the answer is 2xx whatever comes next. Clearing the mark is a courtesy to readers
        // of the store: a binding left marked is still the platform's to unbind, and the platform's
        // next bind of it (a re-sent bind-app) is then taken for a first one.
        await held.saveBinding(binding, LAST_WRITE).catch((error: unknown) => {
          this.#log.warn({ err: error, instance, requestId: context.requestId }, "could not clear the bind's mark on a recorded binding; it stays marked");
        });
        return { created: before === undefined, env };
      },
      target,
    );
  }

  /**
   * Undo a bind the platform was told failed: the unbind handler runs with the binding the bind
   * made, then the binding (and any earlier one of that app, unit or job) is forgotten. The first
   * try runs at once, under the lock the bind still holds, so no later call on the instance comes
   * between; a failed try is retried in the background like a step (`maxStepAttempts`,
   * `stepRetryDelayMs`, `stepRetryBackoff`), each retry under the lock, and given up when a later
   * bind of the same app, unit or job was recorded meanwhile (the platform holds that one).
   */
  async #undoBind(held: LockedInstance, record: InstanceRecord, binding: BindingRecord, calls: BindCalls, context: RequestContext): Promise<void> {
    const log = this.#log.child({ instance: binding.instance, binding: binding.key, kind: binding.kind, requestId: context.requestId });
    const unbind = calls.unbind;
    if (!unbind) {
      log.error(`the provider has no unbind handler for a ${binding.kind} binding; what the bind made stays`);
      return;
    }
    const recordedBefore = held.binding?.updatedAt;
    const attempt = async (locked: LockedInstance, instance: InstanceRecord): Promise<void> => {
      const ctx: HandlerContext = {
        requestId: `undo-bind:${context.requestId}`,
        signal: locked.signal,
        log,
        placement: context.placement,
        record: structuredClone(instance),
        binding,
      };
      await unbind(ctx);
      await locked.deleteBinding(binding);
    };
    const retry = (attempts: number, error: unknown): void => {
      if (attempts >= this.#settings.maxStepAttempts) {
        log.error({ err: error, attempts }, "could not undo a bind the platform was told failed; its credentials may still be valid");
        return;
      }
      log.warn({ err: error, attempts }, "undoing a bind the platform was told failed did not work; retrying");
      const delay = this.#settings.stepRetryDelayMs * this.#settings.stepRetryBackoff ** (attempts - 1);
      const timer = setTimeout(() => {
        this.#undoRetries.delete(timer);
        const undo = this.store.withLock(binding.instance, this.#settings.lockTimeoutMs, async (locked) => {
          const current = locked.record;
          // Gone with its instance, unbound by the platform, or replaced by a bind the platform was
          // answered: nothing left to undo. A binding still marked unanswered is none of these.
          const found = locked.binding;
          const replaced = found === undefined ? recordedBefore !== undefined : found.bindUnanswered !== true && found.updatedAt !== recordedBefore;
          if (!current || current.state === "deleting" || replaced) return;
          await attempt(locked, current);
        }, { binding, holdUntil: Date.now() + this.#settings.lockTimeoutMs });
        void this.#track(undo.then(() => log.info("undid a bind the platform was told failed"), (failure: unknown) => retry(attempts + 1, failure)));
      }, delay);
      timer.unref();
      this.#undoRetries.add(timer);
    };
    try {
      await attempt(held, record);
      log.info("undid a bind the platform was told failed");
    } catch (error) {
      retry(1, error);
    }
  }

  /** The log line of a call whose handler succeeded after the platform was told it failed. */
  #lateSuccess(instance: string, context: RequestContext, call: string, undo: string): void {
    this.#log.warn({ instance, requestId: context.requestId }, `${call} finished after its timeout answered 500; ${undo}`);
  }

  /** Unbinding something already gone succeeds without the handler: the platform sends compensating calls. */
  async #unbind(
    instance: string,
    target: BindingTarget,
    context: RequestContext,
    call: (context: HandlerContext) => void | Promise<void>,
  ): Promise<void> {
    await this.#locked(
      instance,
      context,
      async (held) => {
        const record = found(held.record, instance);
        if (record.state === "deleting" || !held.binding) return;
        await call(handlerContext(context, record, held, held.binding));
        await held.deleteBinding(target, LAST_WRITE);
      },
      target,
    );
  }
}

export function registryLifecycle(handlers: ProviderHandlers, options: RegistryOptions, log: Logger, stepMetrics: StepMetrics): RegistryLifecycle {
  return new Registry(handlers, options, log, stepMetrics);
}
