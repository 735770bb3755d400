/**
 * The environment an app gets (platform-notes.md): the users' variables, each bound instance's
 * variables as flat private ones (last bind wins on a clash), `TSURU_SERVICES` keyed by service,
 * `TSURU_APPNAME` and `TSURU_APPDIR`.
 */
import { appLog, exclusive, type Actor, type Context } from "./context.js";
import { badRequest, notFound } from "./errors.js";
import { ENV_NAME, type App, type EnvVar } from "./model.js";
import { appFor, appLock } from "./apps.js";
import { loadsCode, reachesProcesses } from "./tool-variables.js";

export const PRIVATE_SHOWN = "*** (private variable)";

function tsuruServices(app: App): string {
  const services: Record<string, Array<{ instance_name: string; envs: Record<string, string> }>> = {};
  for (const bound of app.serviceEnvs) {
    (services[bound.service] ??= []).push({ instance_name: bound.instance, envs: bound.envs });
  }
  return JSON.stringify(services);
}

/** The app's environment; `fromServices` picks the services' variables it holds (all of them by default). */
function appEnv(app: App, fromServices: (name: string) => boolean = () => true): EnvVar[] {
  const env = new Map<string, EnvVar>();
  for (const variable of app.env) env.set(variable.name, variable);
  for (const bound of app.serviceEnvs) {
    for (const [name, value] of Object.entries(bound.envs)) if (fromServices(name)) env.set(name, { name, value, public: false });
  }
  env.set("TSURU_SERVICES", { name: "TSURU_SERVICES", value: tsuruServices(app), public: false });
  env.set("TSURU_APPNAME", { name: "TSURU_APPNAME", value: app.name, public: true });
  env.set("TSURU_APPDIR", { name: "TSURU_APPDIR", value: "/home/application/current", public: true });
  return [...env.values()];
}

/** As `GET /apps/<a>/env` shows it: private values hidden, as the platform's env-get does. */
export async function shownEnv(context: Context, actor: Actor, name: string): Promise<EnvVar[]> {
  const app = await appFor(context, actor, name);
  return appEnv(app).map((variable) => (variable.public ? variable : { ...variable, value: PRIVATE_SHOWN }));
}

/** One variable with its value even when private (the console's click to reveal): for users of the app, who can `run env` anyway. */
export async function revealedEnv(context: Context, actor: Actor, name: string, variable: string): Promise<EnvVar> {
  const app = await appFor(context, actor, name);
  const found = appEnv(app).find((item) => item.name === variable);
  if (!found) throw notFound(`The app "${name}" has no environment variable "${variable.slice(0, 60)}".`);
  return found;
}

/**
 * The variables a process of the app sees (`run`): the users' variables, and of the services'
 * only those whose names reach processes (tool-variables.ts); all of them stay in TSURU_SERVICES.
 */
export function processEnv(app: App): Record<string, string> {
  return Object.fromEntries(appEnv(app, reachesProcesses).map((variable) => [variable.name, variable.value]));
}

/** The names of a bind answer that stay out of the app's processes (in TSURU_SERVICES and the env listing only). */
export function heldBackFromProcesses(names: string[]): string[] {
  return names.filter((name) => !reachesProcesses(name));
}

const MAX_NAME_CHARS = 100;
const MAX_VALUE_BYTES = 64 * 1024;
/** Variables one provider answer may set. */
const MAX_BOUND_VARIABLES = 100;
/**
 * What the kernel takes when `run` starts a process: each `NAME=value` at most 128 KiB
 * (MAX_ARG_STRLEN; past it exec fails with E2BIG), and the whole environment kept well under
 * ARG_MAX (2 MiB with the default 8 MiB stack).
 */
const PROCESS_ENV_LIMITS = { variableBytes: 128 * 1024, totalBytes: 1024 * 1024 };

/**
 * What is wrong with a variable a user sets or a provider's bind answer exports, or undefined:
 * its name and value, the same rules for both.
 */
function variableProblem(name: string, value?: string): string | undefined {
  const shown = JSON.stringify(name.slice(0, 60));
  if (!ENV_NAME.test(name) || name.length > MAX_NAME_CHARS) {
    return `${shown} is not a variable name (letters, digits and _, not starting with a digit, at most ${MAX_NAME_CHARS} characters)`;
  }
  if (name.startsWith("TSURU_")) return `${shown} is one of the TSURU_* variables the platform sets`;
  if (value?.includes("\0")) return `the value of ${shown} holds a NUL byte`;
  if (value !== undefined && Buffer.byteLength(value) > MAX_VALUE_BYTES) return `the value of ${shown} is longer than ${MAX_VALUE_BYTES / 1024} KiB`;
  return undefined;
}

/**
 * What is wrong with the variables of a provider's bind answer, or undefined. A name that steers
 * a tool is no problem here: it never reaches a process (processEnv).
 */
export function boundVariablesProblem(variables: Record<string, string>): string | undefined {
  const names = Object.keys(variables);
  if (names.length > MAX_BOUND_VARIABLES) return `it exports ${names.length} variables, more than ${MAX_BOUND_VARIABLES}`;
  for (const name of names) {
    const problem = variableProblem(name, variables[name]);
    if (problem) return problem;
  }
  return undefined;
}

/** What in the app's environment the kernel would refuse to start a process with, or undefined. */
export function processEnvProblem(app: App): string | undefined {
  let total = 0;
  for (const [name, value] of Object.entries(processEnv(app))) {
    const bytes = Buffer.byteLength(name) + 1 + Buffer.byteLength(value) + 1; // NAME=value and its NUL
    if (bytes > PROCESS_ENV_LIMITS.variableBytes) return `the app's ${JSON.stringify(name)} would be ${Math.ceil(bytes / 1024)} KiB, more than the ${PROCESS_ENV_LIMITS.variableBytes / 1024} KiB the kernel passes to a process in one variable`;
    total += bytes;
  }
  if (total > PROCESS_ENV_LIMITS.totalBytes) return `the app's environment would be ${Math.ceil(total / 1024)} KiB, more than the ${PROCESS_ENV_LIMITS.totalBytes / 1024} KiB the platform passes to a process`;
  return undefined;
}

/** A user's variable reaches the app's processes as it is: one that makes a tool load code is refused. */
function check(name: string, value?: string): void {
  const problem = variableProblem(name, value) ?? loadsCode(name);
  if (problem) throw badRequest(`Cannot set the variable: ${problem}.`);
}

export async function setEnv(context: Context, actor: Actor, name: string, variables: EnvVar[]): Promise<void> {
  for (const variable of variables) check(variable.name, variable.value);
  await exclusive(context, [appLock(name)], async () => {
    const app = await appFor(context, actor, name);
    const names = new Set(variables.map((variable) => variable.name));
    app.env = [...app.env.filter((variable) => !names.has(variable.name)), ...variables];
    const tooBig = processEnvProblem(app);
    if (tooBig) throw badRequest(`Cannot set the variables: ${tooBig}.`);
    await context.store.put("apps", app.name, app);
    await appLog(context, app.name, `setting env vars ${[...names].join(", ")}; restarting app`);
  });
}

export async function unsetEnv(context: Context, actor: Actor, name: string, names: string[]): Promise<void> {
  for (const variable of names) check(variable);
  await exclusive(context, [appLock(name)], async () => {
    const app = await appFor(context, actor, name);
    app.env = app.env.filter((variable) => !names.includes(variable.name));
    await context.store.put("apps", app.name, app);
    await appLog(context, app.name, `unsetting env vars ${names.join(", ")}; restarting app`);
  });
}
