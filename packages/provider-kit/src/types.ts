/**
 * Domain types of a provider: what handlers receive and return.
 * Nothing here knows about HTTP; the endpoints in `src/endpoints/` translate.
 */
import type { Logger } from "pino";
import type { ProviderActions } from "./action-declarations.js";
import type { OsbCall } from "./osb/types.js";

/** Free-form parameters: `parameters.tls.enabled=true` arrives as `{ tls: { enabled: "true" } }`. */
export type Parameters = { [key: string]: string | string[] | Parameters };

/** JSON a handler may keep on an instance record (ports, resource ids, generated secrets). */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type InstanceData = { [key: string]: JsonValue };

export interface Plan {
  name: string;
  description: string;
}

export interface InfoItem {
  label: string;
  value: string;
}

import type { Placement } from "./contract.js";

export type { Placement } from "./contract.js";

/** A cluster's credentials as the platform propagates them: a secret, never log it. */
export interface KubeConfig {
  cluster: { [key: string]: JsonValue };
  user: { [key: string]: JsonValue };
}

/**
 * Where the call's instance lives (multi-cluster services), from the `X-Tsuru-Pool-*` and
 * `X-Tsuru-Cluster-*` headers; on plans, the pool the user asked plans for. Empty otherwise.
 */
export interface CallPlacement extends Placement {
  /** Present when the cluster propagates its kube config to services. */
  kubeConfig?: KubeConfig;
}

// ---------------------------------------------------------------------------
// Requests: one typed, validated object per call. `instance` is always the instance name.

export interface CreateRequest {
  instance: string;
  plan?: string;
  team?: string;
  tags: string[];
  description?: string;
  parameters: Parameters;
}

/** The full new state of the instance: the platform sends every field of create again, not a diff. */
export type UpdateRequest = CreateRequest;

export interface DestroyRequest {
  instance: string;
}

/**
 * Bind an app (Variant A bind-app, Variant B bind by hostname).
 * `appName` is absent only on Variant B, which knows the app by `appHost` alone.
 */
export interface BindAppRequest {
  instance: string;
  appName?: string;
  appHost?: string;
  appHosts: string[];
  appInternalHosts: string[];
  parameters: Parameters;
  placement: Placement;
}

export interface UnbindAppRequest {
  instance: string;
  appName?: string;
  appHost?: string;
  appHosts: string[];
  placement: Placement;
}

/** One unit (container) of an app, Variant A `POST /resources/:name/bind`. */
export interface BindUnitRequest {
  instance: string;
  appName?: string;
  appHost?: string;
  unitHost: string;
}

export type UnbindUnitRequest = BindUnitRequest;

export interface BindJobRequest {
  instance: string;
  jobName: string;
  parameters: Parameters;
  placement: Placement;
}

export interface UnbindJobRequest {
  instance: string;
  jobName: string;
  placement: Placement;
}

export interface InstanceRequest {
  instance: string;
}

// ---------------------------------------------------------------------------
// Results.

/** Environment variables for the bound app. Numbers and booleans are sent as strings. */
export type BindEnv = Record<string, string | number | boolean>;
export type BindResult = BindEnv | null | undefined | void;

/**
 * What `create` (and `destroy`) may return.
 * `pending: true` says the work goes on in the background: `provision` (or `deprovision`)
 * runs after the call has answered, with retries, and its outcome lands in the registry.
 * `data` is kept on the instance record and handed back to every later handler.
 */
export type LifecycleResult = void | { pending?: boolean; data?: InstanceData };

export type UpdateResult = void | { data?: InstanceData };

/**
 * What `status` reports: `"pending"` (202), `{ pending: progress }` (202 with the progress as
 * text), `"running"` (204), `{ down: reason }` (500) or `{ message }` for a custom status text (200).
 */
export type StatusResult = "pending" | { pending: string } | "running" | { down: string } | { message: string };

export type InfoResult = InfoItem[] | null | undefined | void;

// ---------------------------------------------------------------------------
// Registry records (kept by the framework when the registry is on).

export type InstanceState = "provisioning" | "ready" | "failed" | "updating" | "deleting";

export interface InstanceRecord {
  name: string;
  plan?: string;
  team?: string;
  tags: string[];
  description?: string;
  parameters: Parameters;
  state: InstanceState;
  /** Why the instance is `failed` (or why the last step attempt failed). */
  reason?: string;
  data: InstanceData;
  createdAt: string;
  updatedAt: string;
  /** Background work still owed on this instance; absent when none. */
  step?: PendingStep;
  /**
   * Set by the create that wrote the record until its write is known to have landed (the create
   * then answers 201 and clears it). A record still carrying it may come from a create that
   * answered 503 while its write was in flight: the next create of that name replaces it.
   */
  createUnanswered?: true;
  /**
   * Set by a create that may be repeated only as it was made: what it asked for beyond the create
   * request (OSB's `space_guid`). A create of the name with other terms is refused.
   */
  terms?: Record<string, string>;
}

export interface PendingStep {
  kind: "provision" | "deprovision";
  attempts: number;
  /** ISO time after which the step is given up and the instance marked failed. */
  deadline: string;
  /** The latest message of `StepContext.progress`: the status answer carries it while the step is owed. */
  progress?: string;
}

export type BindingKind = "app" | "unit" | "job";

export interface BindingRecord {
  instance: string;
  kind: BindingKind;
  /** App name (or app host on Variant B), unit host, or job name. */
  key: string;
  appName?: string;
  appHost?: string;
  unitHost?: string;
  jobName?: string;
  /** Set by a bind that may be repeated only as it was made (`BindingTerms`): what it asked for. */
  terms?: BindingTerms;
  /**
   * Set by the bind that wrote the binding until its write is known to have landed (as
   * `InstanceRecord.createUnanswered`). A binding still carrying it may come from a bind that
   * answered 503 while its write was in flight: the platform does not hold it, so the bind's undo
   * removes it and the next bind of that app, unit or job replaces it as a first bind.
   */
  bindUnanswered?: true;
  createdAt: string;
  updatedAt: string;
}

/**
 * What a bind that may be repeated only identically asks for besides its app: the platform's
 * plan and parameters (OSB's `plan_id` and `parameters`). A binding recorded with other terms,
 * or for another app, refuses it.
 */
export interface BindingTerms {
  plan?: string;
  parameters: Parameters;
}

// ---------------------------------------------------------------------------
// Contexts.

/** Who asked, from the platform's headers. */
export interface Caller {
  requestId: string;
  user?: string;
  eventId?: string;
}

/**
 * What a handler gets besides the request. An object whose `signal` and `log` are built on first
 * read (most handlers use neither): pass it on as it is, or read them from it; a copy made with
 * `{ ...ctx }` does not carry them.
 */
export interface HandlerContext extends Caller {
  /**
   * Aborted when the handler timeout (`handlerTimeoutMs`) passes (the call has then answered
   * 500), or, with the registry, when the call loses its instance lock (what it saves from then
   * on is refused). `close()` lets calls finish instead.
   */
  signal: AbortSignal;
  /** Child logger carrying the request id. */
  log: Logger;
  /** The pool and cluster of the call (the instance's; on binds, `request.placement` is the app's or job's). */
  placement: CallPlacement;
  /** The instance as the registry knows it (absent with `registry: false`). */
  record?: InstanceRecord;
  /** On bind and unbind: the binding the registry already holds for this app, unit or job. */
  binding?: BindingRecord;
  /** On calls that came through the Open Service Broker API (option `osb`): what OSB said. */
  osb?: OsbCall;
}

export interface StepContext {
  signal: AbortSignal;
  log: Logger;
  /** 1 on the first try. */
  attempt: number;
  /**
   * Tell the user how the step goes ("restoring snapshot, 40%"): kept on the instance record, the
   * status answer carries the latest message while the step is owed. One short line of plain text
   * (shown as it is, cut at 200 characters). Never rejects: a message the store could not save is
   * logged and the previous one stays.
   */
  progress(message: string): Promise<void>;
}

// ---------------------------------------------------------------------------
// Handlers.

type Handler<Req, Res> = (request: Req, context: HandlerContext) => Res | Promise<Res>;

export interface ProviderHandlers {
  /** `GET /resources/plans`. Absent: 404. */
  plans?: (context: HandlerContext) => Plan[] | Promise<Plan[]>;
  /** Required. Create the resource, or return `{ pending: true }` and finish it in `provision`. */
  create: Handler<CreateRequest, LifecycleResult>;
  /** Background part of create; throw to retry. Required when `create` returns `pending`. */
  provision?: (record: InstanceRecord, context: StepContext) => UpdateResult | Promise<UpdateResult>;
  /** `PUT /resources/:name`. Absent: 404, which the platform reads as "not supported". */
  update?: Handler<UpdateRequest, UpdateResult>;
  /** Required. Remove the resource, or return `{ pending: true }` and finish in `deprovision`. */
  destroy: Handler<DestroyRequest, LifecycleResult>;
  /** Background part of destroy; throw to retry. */
  deprovision?: (record: InstanceRecord, context: StepContext) => void | Promise<void>;
  /** Required. Bind an app; return its environment. */
  bindApp: Handler<BindAppRequest, BindResult>;
  /** Required. */
  unbindApp: Handler<UnbindAppRequest, void>;
  bindUnit?: Handler<BindUnitRequest, BindResult>;
  unbindUnit?: Handler<UnbindUnitRequest, void>;
  bindJob?: Handler<BindJobRequest, BindResult>;
  unbindJob?: Handler<UnbindJobRequest, void>;
  /** With the registry on, called only for a ready instance, to check the resource itself. */
  status?: Handler<InstanceRequest, StatusResult>;
  /** `GET /resources/:name`. Return nothing for 404 "no extra info". */
  info?: Handler<InstanceRequest, InfoResult>;
  /** Your own commands, which the platform's proxy forwards: `declareActions({...}).implement({...})`. */
  actions?: ProviderActions;
}
