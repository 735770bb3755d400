/**
 * The calls of a conformance run: the shared provider calls (src/provider-client/calls.ts)
 * with the run's made-up names, so the lifecycle and the unknown-instance probes send the same thing.
 */
import type { Call } from "../provider-client/client.js";
import { providerCalls, type AppSpec, type InstanceSpec, type JobSpec } from "../provider-client/calls.js";
import type { ParameterTree } from "../provider-client/payloads.js";
import type { Placement } from "../provider-client/types.js";
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
const PLACEMENT: Placement = {
  pool: "pkc-pool",
  cluster: "pkc-cluster",
  provisioner: "kubernetes",
  addresses: ["https://10.0.0.1:6443", "https://10.0.0.2:6443"],
};
const KIT_USER = "pkc-user@example.com";

export interface CreateSettings {
  plan?: string;
  team: string;
}

export type PlatformCalls = ReturnType<typeof platformCalls>;

/** The kit plays today's platform for Variants A and current alike; unit binds are the scenario's choice. */
export function platformCalls(names: RunNames, variant: Variant, settings: CreateSettings) {
  const calls = providerCalls({ variant, event: { user: KIT_USER }, modernFields: true });
  const instance = (name: string, description: string, tags: string[]): InstanceSpec => ({
    name,
    team: settings.team,
    plan: settings.plan,
    description,
    tags,
    parameters: PARAMETERS,
  });
  const app: AppSpec = {
    name: names.app,
    hosts: names.appHosts,
    internalHosts: names.appInternalHosts,
    placement: PLACEMENT,
    parameters: PARAMETERS,
  };
  const job: JobSpec = { name: names.job, placement: PLACEMENT };

  return {
    plans: (): Call => calls.plans(),
    create: (name: string): Call => calls.create(instance(name, "conformance check", TAGS)),
    update: (name: string): Call => calls.update(instance(name, "conformance check, updated", [...TAGS, "updated"])),
    destroy: (name: string): Call => calls.destroy(name),
    bindApp: (name: string): Call => calls.bindApp(name, app),
    unbindApp: (name: string): Call => calls.unbindApp(name, app),
    bindUnit: (name: string): Call => calls.bindUnit(name, app, names.unitHost),
    unbindUnit: (name: string): Call => calls.unbindUnit(name, app, names.unitHost),
    bindJob: (name: string): Call => calls.bindJob(name, job),
    unbindJob: (name: string): Call => calls.unbindJob(name, job),
    status: (name: string): Call => calls.status(name),
    info: (name: string): Call => calls.info(name),
  };
}
