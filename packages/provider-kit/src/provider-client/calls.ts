/**
 * Every call the platform makes to a provider, with the fields it sends, for one variant: the
 * one place that knows the contract's field names. The conformance kit and the local platform
 * both build their requests here, so they send the same thing.
 */
import type { Call } from "./client.js";
import type { ParameterTree } from "./payloads.js";
import type { Placement, Variant } from "../contract.js";
import type { EventContext } from "./types.js";

export interface InstanceSpec {
  name: string;
  team: string;
  plan?: string;
  description?: string;
  tags?: string[];
  parameters?: ParameterTree;
}

export interface AppSpec {
  name: string;
  /** The app's addresses; the first is the `app-host` of the form encoding. */
  hosts: [string, ...string[]];
  internalHosts: string[];
  placement: Placement;
  parameters?: ParameterTree;
}

export interface JobSpec {
  name: string;
  placement: Placement;
}

export interface CallStyle {
  variant: Variant;
  /** The user and event of mutating calls (Variants A and current). */
  event: EventContext;
  /**
   * Send what only today's platform sends: tags, parameters, descriptions and the app's
   * placement fields. Off: the calls of the spec's Variant A era. The X-Tsuru-* placement
   * headers are the instance's, added by the caller for an instance in a pool.
   */
  modernFields: boolean;
}

export type ProviderCalls = ReturnType<typeof providerCalls>;

export function providerCalls({ variant, event, modernFields }: CallStyle) {
  const modern = variant !== "B";
  const at = (instance: string) => `/resources/${encodeURIComponent(instance)}`;
  const appFields = (app: AppSpec) => ({ "app-name": app.name, "app-hosts": app.hosts });
  type Fields = Record<string, string | string[]>;
  /** The fields that are set: the platform leaves out what it does not know. */
  const present = (fields: Record<string, string | string[] | undefined>): Fields =>
    Object.fromEntries(Object.entries(fields).filter((entry): entry is [string, string | string[]] => entry[1] !== undefined));
  // Jobs carry only their pool and cluster names.
  const placementFields = (prefix: "app" | "job", placement: Placement): Fields =>
    present(
      prefix === "app"
        ? {
            "app-pool-name": placement.poolName,
            "app-pool-provisioner": placement.poolProvisioner,
            "app-cluster-name": placement.clusterName,
            "app-cluster-provisioner": placement.clusterProvisioner,
            "app-cluster-addresses": placement.clusterAddresses,
          }
        : { "job-pool-name": placement.poolName, "job-cluster-name": placement.clusterName },
    );
  const tags = (instance: InstanceSpec): Fields => (modernFields && instance.tags?.length ? { tags: instance.tags } : {});
  const description = (instance: InstanceSpec): Fields =>
    modernFields && instance.description ? { description: instance.description } : {};
  const parameters = (tree: ParameterTree | undefined) => (modernFields && tree ? { parameters: tree } : {});
  const unit = (app: AppSpec, unitHost: string) => ({
    fields: { "app-name": app.name, "app-host": app.hosts[0], "unit-host": unitHost },
    // Unit binds stopped before the JSON encoding existed: they are always form encoded.
    formOnly: true,
  });
  const jobPath = (instance: string, job: JobSpec) => `${at(instance)}/binds/jobs/${encodeURIComponent(job.name)}`;
  const jobFields = (job: JobSpec) => ({ "job-name": job.name, ...placementFields("job", job.placement) });

  return {
    plans: (): Call => ({ method: "GET", path: "/resources/plans" }),
    /** Not a contract call: providers built with provider-kit answer it (the platform's full health check). */
    healthcheck: (): Call => ({ method: "GET", path: "/healthcheck" }),

    create: (instance: InstanceSpec): Call =>
      modern
        ? {
            method: "POST",
            path: "/resources",
            event,
            payload: {
              fields: {
                name: instance.name,
                team: instance.team,
                ...tags(instance),
                ...description(instance),
                ...(instance.plan ? { plan: instance.plan } : {}),
              },
              ...parameters(instance.parameters),
            },
          }
        : { method: "POST", path: "/resources", payload: { fields: { name: instance.name } } },

    /** The full new state, as the platform sends it (not a diff). */
    update: (instance: InstanceSpec): Call => ({
      method: "PUT",
      path: at(instance.name),
      event,
      payload: {
        fields: { ...description(instance), team: instance.team, ...tags(instance), plan: instance.plan ?? "" },
        ...parameters(instance.parameters),
      },
    }),

    destroy: (instance: string): Call =>
      modern
        ? { method: "DELETE", path: at(instance), event, payload: { fields: {} } }
        : { method: "DELETE", path: at(instance) },

    bindApp: (instance: string, app: AppSpec): Call =>
      modern
        ? {
            method: "POST",
            path: `${at(instance)}/bind-app`,
            event,
            secretAnswer: true,
            payload: {
              fields: {
                ...appFields(app),
                ...(modernFields
                  ? { "app-internal-hosts": app.internalHosts, ...placementFields("app", app.placement) }
                  : {}),
              },
              formOnlyFields: { "app-host": app.hosts[0] },
              ...parameters(app.parameters),
            },
          }
        : { method: "POST", path: at(instance), secretAnswer: true, payload: { fields: { hostname: app.hosts[0] } } },

    /** The fallback of a bind-app answered 404: the same fields, once, to the old path. */
    bindAppFallback: (instance: string, app: AppSpec): Call => ({
      method: "POST",
      path: `${at(instance)}/bind`,
      event,
      secretAnswer: true,
      payload: { fields: appFields(app), formOnlyFields: { "app-host": app.hosts[0] } },
    }),

    unbindApp: (instance: string, app: AppSpec): Call =>
      modern
        ? {
            method: "DELETE",
            path: `${at(instance)}/bind-app`,
            event,
            payload: { fields: appFields(app), formOnlyFields: { "app-host": app.hosts[0] } },
          }
        : { method: "DELETE", path: `${at(instance)}/hostname/${encodeURIComponent(app.hosts[0])}` },

    bindUnit: (instance: string, app: AppSpec, unitHost: string): Call => ({
      method: "POST",
      path: `${at(instance)}/bind`,
      secretAnswer: true,
      payload: unit(app, unitHost),
    }),
    unbindUnit: (instance: string, app: AppSpec, unitHost: string): Call => ({
      method: "DELETE",
      path: `${at(instance)}/bind`,
      payload: unit(app, unitHost),
    }),

    bindJob: (instance: string, job: JobSpec): Call => ({
      method: "PUT",
      path: jobPath(instance, job),
      event,
      secretAnswer: true,
      payload: { fields: jobFields(job) },
    }),
    unbindJob: (instance: string, job: JobSpec): Call => ({
      method: "DELETE",
      path: jobPath(instance, job),
      event,
      payload: { fields: jobFields(job) },
    }),

    status: (instance: string): Call => ({ method: "GET", path: `${at(instance)}/status` }),
    info: (instance: string): Call => ({ method: "GET", path: at(instance) }),
  };
}
