/**
 * Every call the platform makes, with the fields it sends, for one variant. The lifecycle and
 * the unknown-instance probes both build their requests here, so they send the same thing.
 */
import { PLACEMENT, type Call } from "../provider-client/client.js";
import type { ParameterTree } from "../provider-client/payloads.js";
import type { Variant } from "./types.js";

/** Names of the things a run binds. Derived from the instance name so runs never collide. */
export interface RunNames {
  instance: string;
  /** An instance that does not exist, for the 404 probes. */
  missing: string;
  app: string;
  appHosts: [string, ...string[]];
  appInternalHosts: string[];
  unitHost: string;
  job: string;
}

export function runNames(instance: string, missing: string): RunNames {
  return {
    instance,
    missing,
    app: `${instance}-app`,
    appHosts: [`${instance}-app.example.com`, `${instance}-app.example.org`],
    appInternalHosts: [`${instance}-app.pkc.svc.cluster.local`],
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
  const plan: Record<string, string> = settings.plan ? { plan: settings.plan } : {};
  const appHost = names.appHosts[0];
  const appFields = { "app-name": names.app, "app-hosts": names.appHosts };
  const jobFields = { "job-name": names.job, "job-pool-name": PLACEMENT.pool, "job-cluster-name": PLACEMENT.cluster };
  const jobPath = (instance: string) => `${at(instance)}/binds/jobs/${encodeURIComponent(names.job)}`;
  const unit = {
    fields: { "app-name": names.app, "app-host": appHost, "unit-host": names.unitHost },
    // Unit binds stopped before the JSON encoding existed: they are always form encoded.
    formOnly: true,
  };

  return {
    plans: (): Call => ({ method: "GET", path: "/resources/plans" }),

    create: (instance: string): Call =>
      modern
        ? {
            method: "POST",
            path: "/resources",
            event: true,
            payload: {
              fields: { name: instance, team: settings.team, tags: TAGS, description: "conformance check", ...plan },
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

    bindApp: (instance: string): Call =>
      modern
        ? {
            method: "POST",
            path: `${at(instance)}/bind-app`,
            event: true,
            placement: true,
            secretAnswer: true,
            payload: {
              fields: {
                ...appFields,
                "app-internal-hosts": names.appInternalHosts,
                "app-pool-name": PLACEMENT.pool,
                "app-pool-provisioner": "kubernetes",
                "app-cluster-name": PLACEMENT.cluster,
                "app-cluster-provisioner": "kubernetes",
                "app-cluster-addresses": PLACEMENT.addresses,
              },
              formOnlyFields: { "app-host": appHost },
              parameters: PARAMETERS,
            },
          }
        : { method: "POST", path: at(instance), secretAnswer: true, payload: { fields: { hostname: appHost } } },

    unbindApp: (instance: string): Call =>
      modern
        ? {
            method: "DELETE",
            path: `${at(instance)}/bind-app`,
            event: true,
            payload: { fields: appFields, formOnlyFields: { "app-host": appHost } },
          }
        : { method: "DELETE", path: `${at(instance)}/hostname/${encodeURIComponent(appHost)}` },

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
