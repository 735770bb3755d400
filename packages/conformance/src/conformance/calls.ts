/**
 * The calls of a conformance run: the shared provider calls (src/provider-client/calls.ts)
 * with the run's made-up names, so the lifecycle and the unknown-instance probes send the same thing.
 */
import type { Call, Method } from "provider-kit/contract";
import { providerCalls, type AppSpec, type InstanceSpec, type JobSpec } from "provider-kit/contract";
import type { ParameterTree } from "provider-kit/contract";
import type { Placement } from "provider-kit/contract";
import type { Variant } from "./types.js";

/** An app as the platform names it in bind calls. */
export interface AppNames {
  name: string;
  hosts: [string, ...string[]];
  internalHosts: string[];
}

/** Names of the things a run creates and binds. Derived from the instance name so runs never collide. */
export interface RunNames {
  instance: string;
  /** A second instance, to compare what one app gets from two instances. */
  otherInstance: string;
  /** Created with a plan the provider did not list: it exists only if the provider wrongly accepts it. */
  unknownPlanInstance: string;
  /** An instance that does not exist, for the 404 probes. */
  missing: string;
  app: AppNames;
  /** A second app, to compare what two apps get from one instance. */
  otherApp: AppNames;
  unitHost: string;
  job: string;
}

function appNames(name: string): AppNames {
  return { name, hosts: [`${name}.example.com`, `${name}.example.org`], internalHosts: [`${name}.pkc.svc.cluster.local`] };
}

export function runNames(instance: string, missing: string): RunNames {
  return {
    instance,
    otherInstance: `${instance}-2`,
    unknownPlanInstance: `${instance}-plan`,
    missing,
    app: appNames(`${instance}-app`),
    otherApp: appNames(`${instance}-app2`),
    unitHost: "10.0.0.10",
    job: `${instance}-job`,
  };
}

/** Nested on purpose: exercises the `parameters.tls.enabled=true` flattening. */
const PARAMETERS: ParameterTree = { size: "2", tls: { enabled: "true" } };
const TAGS = ["pkc", "conformance"];
const PLACEMENT: Placement = {
  poolName: "pkc-pool",
  poolProvisioner: "kubernetes",
  clusterName: "pkc-cluster",
  clusterProvisioner: "kubernetes",
  clusterAddresses: ["https://10.0.0.1:6443", "https://10.0.0.2:6443"],
};
const KIT_USER = "pkc-user@example.com";

/** The pools a multi-cluster provider is asked plans for, unless the run names its own. */
export const KIT_POOLS: readonly string[] = ["pkc-pool-a", "pkc-pool-b"];

/** A pool as the platform names it in headers, with the kit's cluster (one cluster may serve several pools). */
export function poolPlacement(pool: string): Placement {
  return { ...PLACEMENT, poolName: pool };
}

export interface CreateSettings {
  plan?: string;
  team: string;
  /** The pool the instances live in (a multi-cluster service): every call about them carries its headers. */
  placement?: Placement;
}

export type PlatformCalls = ReturnType<typeof platformCalls>;

/** The kit plays today's platform for Variants A and current alike; unit binds are the scenario's choice. */
export function platformCalls(names: RunNames, variant: Variant, settings: CreateSettings) {
  const calls = providerCalls({ variant, event: { user: KIT_USER }, modernFields: true });
  // As the platform's baseHeader: a call about an instance in a pool carries that pool's headers
  // (on binds too, where the body names the app's or job's pool).
  const inPool = (call: Call): Call => (settings.placement ? { ...call, placement: settings.placement } : call);
  // The run's apps and job run in the instance's pool, when it has one.
  const runsOn = settings.placement ?? PLACEMENT;
  const instance = (name: string, description: string, tags: string[], plan = settings.plan): InstanceSpec => ({
    name,
    team: settings.team,
    plan,
    description,
    tags,
    parameters: PARAMETERS,
  });
  const appSpec = (app: AppNames): AppSpec => ({
    name: app.name,
    hosts: app.hosts,
    internalHosts: app.internalHosts,
    placement: runsOn,
    parameters: PARAMETERS,
  });
  const job: JobSpec = { name: names.job, placement: runsOn };

  return {
    plans: (): Call => calls.plans(),
    /** The plans of one pool, asked with its headers. */
    plansFor: (placement: Placement): Call => ({ ...calls.plans(), placement }),
    /** Variant B sends no plan: `plan` is ignored there. */
    create: (name: string, plan = settings.plan): Call => inPool(calls.create(instance(name, "conformance check", TAGS, plan))),
    update: (name: string): Call => inPool(calls.update(instance(name, "conformance check, updated", [...TAGS, "updated"]))),
    destroy: (name: string): Call => inPool(calls.destroy(name)),
    bindApp: (name: string, app = names.app): Call => inPool(calls.bindApp(name, appSpec(app))),
    unbindApp: (name: string, app = names.app): Call => inPool(calls.unbindApp(name, appSpec(app))),
    bindUnit: (name: string): Call => inPool(calls.bindUnit(name, appSpec(names.app), names.unitHost)),
    unbindUnit: (name: string): Call => inPool(calls.unbindUnit(name, appSpec(names.app), names.unitHost)),
    bindJob: (name: string): Call => inPool(calls.bindJob(name, job)),
    unbindJob: (name: string): Call => inPool(calls.unbindJob(name, job)),
    status: (name: string): Call => inPool(calls.status(name)),
    info: (name: string): Call => inPool(calls.info(name)),
    /**
     * A custom action, as the platform's proxy forwards it: the event headers on a write; the
     * answer may hold credentials (a rotated password), so it is never recorded.
     */
    action: (method: Method, path: string, extra: Partial<Call> = {}): Call =>
      inPool({
        method,
        path,
        ...(method === "GET" ? {} : { event: { user: KIT_USER } }),
        secretAnswer: true,
        ...extra,
      }),
  };
}
