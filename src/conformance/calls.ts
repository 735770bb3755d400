/**
 * Every call the platform makes, with the fields it sends, for one variant. The lifecycle and
 * the unknown-instance probes both build their requests here, so they send the same thing.
 */
import { PLACEMENT, type Call } from "./platform-client.js";
import type { ParameterTree } from "./payloads.js";
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

export interface CreateSettings {
  plan?: string;
  team: string;
}

export type PlatformCalls = ReturnType<typeof platformCalls>;

export function platformCalls(names: RunNames, variant: Variant, settings: CreateSettings) {
  const modern = variant !== "B";
  const at = (instance: string) => `/resources/${encodeURIComponent(instance)}`;
  const appFields = (app: AppNames) => ({ "app-name": app.name, "app-hosts": app.hosts });
  const jobFields = { "job-name": names.job, "job-pool-name": PLACEMENT.pool, "job-cluster-name": PLACEMENT.cluster };
  const jobPath = (instance: string) => `${at(instance)}/binds/jobs/${encodeURIComponent(names.job)}`;
  const unit = {
    fields: { "app-name": names.app.name, "app-host": names.app.hosts[0], "unit-host": names.unitHost },
    // Unit binds stopped before the JSON encoding existed: they are always form encoded.
    formOnly: true,
  };

  return {
    plans: (): Call => ({ method: "GET", path: "/resources/plans" }),

    /** Variant B sends no plan: `plan` is ignored there. */
    create: (instance: string, plan = settings.plan): Call =>
      modern
        ? {
            method: "POST",
            path: "/resources",
            event: true,
            payload: {
              fields: { name: instance, team: settings.team, tags: TAGS, description: "conformance check", ...(plan ? { plan } : {}) },
              parameters: PARAMETERS,
            },
          }
        : { method: "POST", path: "/resources", payload: { fields: { name: instance } } },

    /** The full new state, as the platform sends it (not a diff). */
    update: (instance: string): Call => ({
      method: "PUT",
      path: at(instance),
      event: true,
      payload: {
        fields: { description: "conformance check, updated", team: settings.team, tags: [...TAGS, "updated"], plan: settings.plan ?? "" },
        parameters: PARAMETERS,
      },
    }),

    destroy: (instance: string): Call =>
      modern
        ? { method: "DELETE", path: at(instance), event: true, payload: { fields: {} } }
        : { method: "DELETE", path: at(instance) },

    bindApp: (instance: string, app = names.app): Call =>
      modern
        ? {
            method: "POST",
            path: `${at(instance)}/bind-app`,
            event: true,
            placement: true,
            secretAnswer: true,
            payload: {
              fields: {
                ...appFields(app),
                "app-internal-hosts": app.internalHosts,
                "app-pool-name": PLACEMENT.pool,
                "app-pool-provisioner": "kubernetes",
                "app-cluster-name": PLACEMENT.cluster,
                "app-cluster-provisioner": "kubernetes",
                "app-cluster-addresses": PLACEMENT.addresses,
              },
              formOnlyFields: { "app-host": app.hosts[0] },
              parameters: PARAMETERS,
            },
          }
        : { method: "POST", path: at(instance), secretAnswer: true, payload: { fields: { hostname: app.hosts[0] } } },

    unbindApp: (instance: string, app = names.app): Call =>
      modern
        ? {
            method: "DELETE",
            path: `${at(instance)}/bind-app`,
            event: true,
            payload: { fields: appFields(app), formOnlyFields: { "app-host": app.hosts[0] } },
          }
        : { method: "DELETE", path: `${at(instance)}/hostname/${encodeURIComponent(app.hosts[0])}` },

    bindUnit: (instance: string): Call => ({ method: "POST", path: `${at(instance)}/bind`, secretAnswer: true, payload: unit }),
    unbindUnit: (instance: string): Call => ({ method: "DELETE", path: `${at(instance)}/bind`, payload: unit }),

    bindJob: (instance: string): Call => ({
      method: "PUT",
      path: jobPath(instance),
      event: true,
      placement: true,
      secretAnswer: true,
      payload: { fields: jobFields },
    }),
    unbindJob: (instance: string): Call => ({ method: "DELETE", path: jobPath(instance), event: true, payload: { fields: jobFields } }),

    status: (instance: string): Call => ({ method: "GET", path: `${at(instance)}/status` }),
    info: (instance: string): Call => ({ method: "GET", path: at(instance) }),
  };
}
