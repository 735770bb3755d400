/**
 * Binding instances to apps, in the real platform's order, each step undone when a later one
 * fails, so an app is never half-bound (platform-notes.md):
 *   bind:   (1) the app on the instance, (2) bind-app (404: once more on /bind), (3) the
 *           variables into the app, (4) Variant A: one unit bind per unit.
 *   unbind: unit unbinds, unbind-app (a provider 404 is ignored), then the variables leave;
 *           when a step fails, the units unbound are bound again (and bind-app sent again when
 *           it had been unbound), the platform's unbind pipeline's backward steps. Forced (the
 *           user's `?force=true`, and every unbind of an app removal), provider failures are
 *           passed over and said: a provider that lost the instance cannot keep it bound.
 * Unit changes send the per-unit calls to every bound Variant A provider.
 */
import type { AppSpec, ProviderCalls as CallBuilder } from "provider-kit/contract";
import { bindResultProblem } from "provider-kit/contract";
import { appFor, appLock, appSpec, assertAppAccess, findApp, MAX_UNITS, newUnits } from "./apps.js";
import { appLog, exclusive, type Actor, type Context } from "./context.js";
import { boundVariablesProblem, heldBackFromProcesses, processEnvProblem } from "./env.js";
import { badRequest, failed, PlatformError, preconditionFailed } from "./errors.js";
import { assertInstanceAccess, findInstance, instanceLock, providerState } from "./instances.js";
import type { App, Instance, Service, Unit } from "./model.js";
import { providerProblem, statusOf, succeeded } from "./provider-answer.js";
import type { CallTarget } from "./provider-calls.js";
import { forcing, undoing } from "./operation.js";
import { findService } from "./services.js";

type Undo = () => Promise<unknown>;

/** Steps done so far, undone newest first; an undo that fails does not hide the first error. */
async function withUndo<T>(work: (done: (undo: Undo) => void) => Promise<T>): Promise<T> {
  const steps: Undo[] = [];
  try {
    return await work((undo) => steps.push(undo));
  } catch (error) {
    for (const undo of steps.reverse()) await undoing(undo).catch(() => {});
    throw error;
  }
}

interface Binding {
  service: Service;
  calls: CallBuilder;
  target: CallTarget;
  spec: AppSpec;
}

async function bindingOf(context: Context, actor: Actor, instance: Instance, app: App): Promise<Binding> {
  const service = await findService(context, instance.service);
  return {
    service,
    calls: context.providers.builder(service, actor.email),
    target: { service, instance: instance.name, app: app.name, pool: instance.pool },
    spec: appSpec(context.config, app),
  };
}

/** The records of a bind or unbind, when both exist and the actor may use them (404, 403 otherwise). */
export async function bindTargets(context: Context, actor: Actor, instanceName: string, appName: string): Promise<{ instance: Instance; app: App }> {
  const instance = await findInstance(context, instanceName);
  const app = await findApp(context, appName);
  assertAppAccess(actor, app);
  assertInstanceAccess(actor, instance);
  return { instance, app };
}

/** The status asked after a failed bind only words its message: a provider that hangs does not hold the user longer than this. */
const STATUS_AFTER_FAILURE_MS = 10_000;

/** Binds and answers the names of the variables exported to the app (their values stay in the app's env). */
export async function bind(context: Context, actor: Actor, instanceName: string, appName: string): Promise<string[]> {
  return exclusive(context, [appLock(appName), instanceLock(instanceName)], async () => {
    const { instance, app } = await bindTargets(context, actor, instanceName, appName);
    try {
      return await bindSteps(context, actor, instance, app);
    } catch (error) {
      if (!(error instanceof PlatformError)) throw error;
      // bindServiceInstance: the pipeline's error, then what the provider says of the instance.
      const state = await providerState(context, actor, instance, STATUS_AFTER_FAILURE_MS).then(
        (status) => `"${instanceName}" is ${status}`,
        (statusError: Error) => `failed to retrieve instance status: ${statusError.message}`,
      );
      throw new PlatformError(`${error.message} (${state})`, error.status);
    }
  });
}

/** The bind pipeline (bindAppDBAction, bindAppEndpointAction, setBoundEnvsAction, then the unit binds); the caller holds both locks. */
async function bindSteps(context: Context, actor: Actor, instance: Instance, app: App): Promise<string[]> {
  const [instanceName, appName] = [instance.name, app.name];
  // bindAppDBAction's ErrAppAlreadyBound, a plain error: 500.
  if (instance.apps.includes(appName)) throw failed("app is already bound to this service instance");
  const { service, calls, target, spec } = await bindingOf(context, actor, instance, app);
  const send = (call: Parameters<typeof context.providers.send>[1]) => context.providers.send(target, call);
  const failure = (problem: string) => failed(`Failed to bind the instance "${service.name}/${instanceName}" to the app "${appName}": ${problem}`);

  return withUndo(async (done) => {
    const withApp: Instance = { ...instance, apps: [...instance.apps, appName], pendingBinds: [...(instance.pendingBinds ?? []), appName] };
    await context.store.put("instances", instanceName, withApp);
    done(() => context.store.put("instances", instanceName, instance));

    let result = await send(calls.bindApp(instanceName, spec));
    if (service.variant !== "B" && statusOf(result) === 404) result = await send(calls.bindAppFallback(instanceName, spec));
    if (statusOf(result) === 412) {
      throw preconditionFailed("You cannot bind any app to this service instance because it is not ready yet.");
    }
    if (!succeeded(result)) throw failure(providerProblem(result));
    // An answer that does not decode fails bindAppEndpointAction itself: a pipeline undoes only
    // the steps that succeeded, so the provider is not told to unbind.
    const problem = bindResultProblem(result.answer!.body, true);
    if (problem) throw failure(`its answer cannot be used (${problem})`);
    done(() => send(calls.unbindApp(instanceName, spec)));
    const envs = (JSON.parse(result.answer!.body) ?? {}) as Record<string, string>;
    const refused = boundVariablesProblem(envs);
    if (refused) throw failure(`its answer cannot be used (${refused})`);

    const withEnv: App = { ...app, serviceEnvs: [...app.serviceEnvs, { service: service.name, instance: instanceName, envs }] };
    const tooBig = processEnvProblem(withEnv);
    if (tooBig) throw failure(`its answer cannot be used (${tooBig})`);
    await context.store.put("apps", appName, withEnv);
    done(() => context.store.put("apps", appName, app));

    const hosts = service.variant === "A" ? await bindUnits(context, { service, calls, target, spec }, app.units) : undefined;
    const pendingBinds = withApp.pendingBinds!.filter((name) => name !== appName);
    await context.store.put("instances", instanceName, {
      ...withApp,
      ...(hosts ? { boundUnits: { ...withApp.boundUnits, [appName]: hosts } } : {}),
      pendingBinds,
    });
    const names = Object.keys(envs);
    const heldBack = heldBackFromProcesses(names);
    const outOfProcesses = heldBack.length > 0 ? `; in TSURU_SERVICES only, not in the app's processes: ${heldBack.join(", ")}` : "";
    await appLog(context, appName, `bound to the instance ${instanceName} of ${service.name} (${names.join(", ") || "no variables"}${outOfProcesses}); restarting app`);
    return names;
  });
}

/** Binds each unit; when one fails, unbinds those already bound and says which unit failed. */
async function bindUnits(context: Context, binding: Binding, units: Unit[]): Promise<string[]> {
  const { service, calls, target, spec } = binding;
  const instance = target.instance!;
  const bound: string[] = [];
  for (const unit of units) {
    const result = await context.providers.send(target, calls.bindUnit(instance, spec, unit.ip));
    if (!succeeded(result)) {
      for (const host of bound) await undoing(() => context.providers.send(target, calls.unbindUnit(instance, spec, host)));
      throw failed(`Failed to bind the instance "${service.name}/${instance}" to the unit "${unit.ip}": ${providerProblem(result)}`);
    }
    bound.push(unit.ip);
  }
  return bound;
}

/**
 * Sends every unit address its unbind (a provider 404 means already gone): answers the addresses
 * unbound, and the failure of each address still bound.
 */
async function unbindUnits(context: Context, binding: Binding, hosts: string[]): Promise<{ unbound: string[]; failures: string[] }> {
  const { calls, target, spec } = binding;
  const unbound: string[] = [];
  const failures: string[] = [];
  for (const host of hosts) {
    const call = calls.unbindUnit(target.instance!, spec, host);
    const result = await context.providers.send(target, call);
    if (succeeded(result) || statusOf(result) === 404) unbound.push(host);
    else failures.push(`Failed to unbind ("${call.path}") the unit at ${host}: ${providerProblem(result)}`);
  }
  return { unbound, failures };
}

/** Unbinds every address or none: when one fails, those unbound are bound again and the first failure thrown. */
async function unbindEveryUnit(context: Context, binding: Binding, hosts: string[]): Promise<void> {
  const { unbound, failures } = await unbindUnits(context, binding, hosts);
  if (failures.length === 0) return;
  await rebindUnits(context, binding, unbound);
  throw failed(failures[0]!);
}

/**
 * Undo step: binds again units whose unbind is being undone. A unit the provider refuses is no
 * longer recorded as bound, so the bind-units healer sends its bind again. The caller holds the
 * instance's lock.
 */
async function rebindUnits(context: Context, binding: Binding, hosts: string[]): Promise<void> {
  const { calls, target, spec } = binding;
  const [instanceName, appName] = [target.instance!, target.app!];
  const refused: string[] = [];
  for (const host of hosts) {
    const result = await undoing(() => context.providers.send(target, calls.bindUnit(instanceName, spec, host)));
    if (!succeeded(result)) refused.push(host);
  }
  if (refused.length === 0) return;
  const instance = await findInstance(context, instanceName);
  const still = (instance.boundUnits[appName] ?? []).filter((host) => !refused.includes(host));
  await context.store.put("instances", instanceName, { ...instance, boundUnits: { ...instance.boundUnits, [appName]: still } });
  await appLog(context, appName, `the unit(s) at ${refused.join(", ")} could not be bound to the instance ${instanceName} again: GET /healers/bind-units sends their binds again`);
}

export interface UnbindOptions {
  /** Pass over the provider's failures (`?force=true`): the platform lets go of the binding anyway. */
  force?: boolean;
}

/** Unbinds; answers the provider failures a forced unbind passed over, one line each. */
export async function unbind(context: Context, actor: Actor, instanceName: string, appName: string, { force = false }: UnbindOptions = {}): Promise<string[]> {
  return exclusive(context, [appLock(appName)], async () => {
    const app = await appFor(context, actor, appName);
    return unbindLocked(context, actor, instanceName, app, force);
  });
}

/** The caller holds the app's lock. */
async function unbindLocked(context: Context, actor: Actor, instanceName: string, app: App, force: boolean): Promise<string[]> {
  return exclusive(context, [instanceLock(instanceName)], async () => {
    const instance = await findInstance(context, instanceName);
    assertInstanceAccess(actor, instance);
    if (!instance.apps.includes(app.name)) throw preconditionFailed("This app is not bound to this service instance.");
    const binding = await bindingOf(context, actor, instance, app);
    const { calls, target, spec } = binding;
    const passedOver: string[] = [];
    // A provider failure stops the unbind, its steps undone; forced, it is passed over and said.
    // `[unbind-app-endpoint] ...`: the platform's words for the step it forces; the unit era's steps had none.
    const unlessForced = (failure: string, step = "") => {
      if (!force) throw failed(`${failure} (if the provider can no longer undo this binding, unbind with ?force=true)`);
      passedOver.push(`${step}ignored error due to force: ${failure}`);
    };
    const steps = () => withUndo(async (done) => {
      const { unbound, failures } = await unbindUnits(context, binding, instance.boundUnits[app.name] ?? []);
      done(() => rebindUnits(context, binding, unbound));
      for (const failure of failures) unlessForced(failure);
      const unbindApp = calls.unbindApp(instanceName, spec);
      const result = await context.providers.send(target, unbindApp);
      if (!succeeded(result) && statusOf(result) !== 404) unlessForced(`Failed to unbind ("${unbindApp.path}"): ${providerProblem(result)}`, "[unbind-app-endpoint] ");
      // Undone when the variables cannot leave the app: the provider gets its binding back, as the platform does.
      done(() => context.providers.send(target, calls.bindApp(instanceName, spec)));
      const { [app.name]: _gone, ...boundUnits } = instance.boundUnits;
      await context.store.put("apps", app.name, { ...app, serviceEnvs: app.serviceEnvs.filter((bound) => bound.instance !== instanceName) });
      done(() => context.store.put("apps", app.name, app));
      await context.store.put("instances", instanceName, { ...instance, apps: instance.apps.filter((name) => name !== app.name), boundUnits });
    });
    await (force ? forcing(steps) : steps());
    for (const line of passedOver) {
      context.say(`unbind of the instance ${instanceName} from the app ${app.name}: ${line}`);
      await appLog(context, app.name, line);
    }
    await appLog(context, app.name, `unbound from the instance ${instanceName}${force ? " (forced)" : ""}; restarting app`);
    return passedOver;
  });
}

/**
 * `?unbindall=true` of an instance removal: each bound app is unbound as its own unbind would be
 * (not forced, as the platform does), each said as `removeServiceInstance` says it, as it happens.
 */
export async function unbindEveryApp(context: Context, actor: Actor, instanceName: string, say: (message: string) => void = () => {}): Promise<void> {
  const instance = await findInstance(context, instanceName);
  assertInstanceAccess(actor, instance);
  for (const app of instance.apps) {
    say(`Unbind app "${app}" ...\n`);
    await unbind(context, actor, instanceName, app);
    say(`\nInstance "${instanceName}" is not bound to the app "${app}" anymore.\n`);
  }
}

/** An interrupted bind's undo waits this long at most for each provider call: the provider may be gone for good. */
const UNDO_AT_START_TIMEOUT_MS = 10_000;

/**
 * At start-up: binds the platform was making when it died (kill -9) are undone, as a failed bind
 * is: the provider is told to unbind (what it answers is only logged), and neither record keeps
 * the binding. Answers as soon as every undo holds (or waits in line for) its app's and
 * instance's locks, so the platform serves meanwhile and a request about those records waits for
 * its undo; `undone` settles when all are done. They run side by side, each call briefly bounded.
 */
export async function undoInterruptedBinds(context: Context): Promise<{ undone: Promise<void> }> {
  const interrupted = (await context.store.all("instances")).flatMap((instance) => (instance.pendingBinds ?? []).map((appName) => ({ instance: instance.name, appName })));
  const undos = interrupted.map(({ instance, appName }) =>
    exclusive(context, [appLock(appName), instanceLock(instance)], () => undoInterruptedBind(context, instance, appName)).catch((error: unknown) =>
      context.say(`the bind of the instance ${instance} to the app ${appName} was cut off when the platform stopped, and undoing it failed: ${(error as Error).message}`),
    ),
  );
  return { undone: Promise.all(undos).then(() => {}) };
}

async function undoInterruptedBind(context: Context, instanceName: string, appName: string): Promise<void> {
  const current = await findInstance(context, instanceName);
  const app = await context.store.get("apps", appName);
  if (app) {
    const { calls, target, spec } = await bindingOf(context, { email: "platform", teams: [], admin: true }, current, app);
    const send = (call: Parameters<typeof context.providers.send>[1]) => context.providers.send(target, call, { timeoutMs: UNDO_AT_START_TIMEOUT_MS });
    await undoing(async () => {
      await Promise.all((current.boundUnits[appName] ?? []).map((host) => send(calls.unbindUnit(current.name, spec, host))));
      await send(calls.unbindApp(current.name, spec));
    }).catch(() => {});
    await context.store.put("apps", appName, { ...app, serviceEnvs: app.serviceEnvs.filter((bound) => bound.instance !== current.name) });
  }
  const { [appName]: _gone, ...boundUnits } = current.boundUnits;
  await context.store.put("instances", current.name, {
    ...current,
    apps: current.apps.filter((name) => name !== appName),
    boundUnits,
    pendingBinds: (current.pendingBinds ?? []).filter((name) => name !== appName),
  });
  context.say(`the bind of the instance ${current.name} to the app ${appName} was cut off when the platform stopped: undone`);
}

/**
 * Removes the app, unbinding its instances first (with the provider calls that implies), each
 * unbind forced as the platform does: a provider that fails them cannot keep the app alive.
 */
export async function removeApp(context: Context, actor: Actor, name: string): Promise<void> {
  await exclusive(context, [appLock(name)], async () => {
    for (const instance of await boundInstances(context, name)) {
      await unbindLocked(context, actor, instance.name, await appFor(context, actor, name), true);
    }
    await appFor(context, actor, name);
    await context.store.delete("apps", name);
    // A later app of the same name starts with nothing of this one's: no log, deploys or tokens.
    await context.store.clear("log", name);
    const [deploys, tokens] = await Promise.all([context.store.all("deploys"), context.store.all("appTokens")]);
    await Promise.all([
      ...deploys.filter((deploy) => deploy.app === name).map((deploy) => context.store.delete("deploys", deploy.id)),
      ...tokens.filter((token) => token.app === name).map((token) => context.store.delete("appTokens", token.hash)),
    ]);
  });
}

async function boundInstances(context: Context, app: string): Promise<Instance[]> {
  return (await context.store.all("instances")).filter((instance) => instance.apps.includes(app));
}

function checkCount(count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > MAX_UNITS) {
    throw badRequest(`The number of units must be a whole number from 1 to ${MAX_UNITS}.`);
  }
}

/** Adds units; every bound Variant A provider is told about each new one, or none is added. */
export async function addUnits(context: Context, actor: Actor, name: string, count: number): Promise<void> {
  checkCount(count);
  await exclusive(context, [appLock(name)], async () => {
    const app = await appFor(context, actor, name);
    const instances = await boundInstances(context, name);
    await exclusive(context, instances.map((instance) => instanceLock(instance.name)), async () => {
      const units = await newUnits(context, name, count);
      const updated: Instance[] = [];
      await withUndo(async (done) => {
        for (const instance of instances) {
          const binding = await bindingOf(context, actor, instance, app);
          if (binding.service.variant !== "A") continue;
          const hosts = await bindUnits(context, binding, units);
          done(() => unbindUnits(context, binding, hosts));
          updated.push({ ...instance, boundUnits: { ...instance.boundUnits, [name]: [...(instance.boundUnits[name] ?? []), ...hosts] } });
        }
      });
      for (const instance of updated) await context.store.put("instances", instance.name, instance);
      await context.store.put("apps", name, { ...app, units: [...app.units, ...units] });
      await appLog(context, name, `added ${count} unit(s): ${units.map((unit) => unit.name).join(", ")}`);
    });
  });
}

/** Removes the newest units, unbinding them from every bound Variant A provider first. */
export async function removeUnits(context: Context, actor: Actor, name: string, count: number): Promise<void> {
  checkCount(count);
  await exclusive(context, [appLock(name)], async () => {
    const app = await appFor(context, actor, name);
    if (count > app.units.length) throw badRequest(`The app "${name}" has ${app.units.length} unit(s): cannot remove ${count}.`);
    const removed = app.units.slice(app.units.length - count);
    const hosts = removed.map((unit) => unit.ip);
    const instances = await boundInstances(context, name);
    await exclusive(context, instances.map((instance) => instanceLock(instance.name)), async () => {
      // All instances or none: when one refuses, those already unbound are bound again.
      const updated: Instance[] = [];
      await withUndo(async (done) => {
        for (const instance of instances) {
          const binding = await bindingOf(context, actor, instance, app);
          const bound = (instance.boundUnits[name] ?? []).filter((host) => hosts.includes(host));
          if (bound.length === 0) continue;
          await unbindEveryUnit(context, binding, bound);
          done(() => rebindUnits(context, binding, bound));
          const rest = (instance.boundUnits[name] ?? []).filter((host) => !hosts.includes(host));
          updated.push({ ...instance, boundUnits: { ...instance.boundUnits, [name]: rest } });
        }
      });
      for (const instance of updated) await context.store.put("instances", instance.name, instance);
      await context.store.put("apps", name, { ...app, units: app.units.slice(0, app.units.length - count) });
      await appLog(context, name, `removed ${count} unit(s): ${removed.map((unit) => unit.name).join(", ")}`);
    });
  });
}

/**
 * Brings every bound Variant A provider in line with the app's units: binds the units it was
 * never told about (a bind that failed) and unbinds addresses that are no longer units. A failure
 * is reported, not thrown: the rest still goes ahead. Answers one line per change or failure.
 * The caller holds the app's lock and passes the app as stored.
 */
export async function syncUnitBinds(context: Context, actor: Actor, app: App): Promise<string[]> {
  const lines: string[] = [];
  const instances = await boundInstances(context, app.name);
  await exclusive(context, instances.map((instance) => instanceLock(instance.name)), async () => {
    for (const stale of instances) {
      const instance = await findInstance(context, stale.name);
      const binding = await bindingOf(context, actor, instance, app);
      if (binding.service.variant !== "A") continue;
      const { calls, target, spec } = binding;
      const known = new Set(instance.boundUnits[app.name] ?? []);
      const addresses = new Set(app.units.map((unit) => unit.ip));
      for (const unit of app.units.filter((unit) => !known.has(unit.ip))) {
        const result = await context.providers.send(target, calls.bindUnit(instance.name, spec, unit.ip));
        if (succeeded(result)) known.add(unit.ip);
        lines.push(`${succeeded(result) ? "bound" : "failed to bind"} the unit ${unit.name} (${unit.ip}) to the instance ${instance.name}${succeeded(result) ? "" : `: ${providerProblem(result)}`}`);
      }
      for (const host of [...known].filter((host) => !addresses.has(host))) {
        const result = await context.providers.send(target, calls.unbindUnit(instance.name, spec, host));
        const gone = succeeded(result) || statusOf(result) === 404;
        if (gone) known.delete(host);
        lines.push(`${gone ? "unbound" : "failed to unbind"} the old unit address ${host} from the instance ${instance.name}${gone ? "" : `: ${providerProblem(result)}`}`);
      }
      await context.store.put("instances", instance.name, { ...instance, boundUnits: { ...instance.boundUnits, [app.name]: [...known] } });
    }
  });
  return lines;
}
