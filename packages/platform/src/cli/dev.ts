/**
 * `provider-kit dev`: the service author's inner loop. In a project made by `provider-kit init`
 * (or any project with a `start` script and package.json `providerKit.serviceId`), it starts a
 * local platform (state in memory), starts the provider as `npm start` would (its start script,
 * with the project's .env), registers the service with its actions, a team and a demo app, and
 * restarts the provider whenever its sources or its .env change. Ctrl-C stops everything it
 * started; a second Ctrl-C kills it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { connect, createServer } from "node:net";
import path from "node:path";
import { parseEnv } from "node:util";
import type { Command } from "commander";
import { actionsManifest } from "provider-kit";
import { colorOn, EXIT, loadActions, ownPackage, SIGNAL_EXIT } from "provider-kit/cli";
import { SERVICE_NAME_PATTERN } from "provider-kit/contract";
import { createApp } from "../platform/domain/apps.js";
import type { Context } from "../platform/domain/context.js";
import { manifestOf } from "../platform/domain/manifest.js";
import { setActionsManifest } from "../platform/domain/service-actions.js";
import { instancesUnknownToProvider, registerService } from "../platform/domain/services.js";
import { createTeam } from "../platform/domain/teams.js";
import { actorOf } from "../platform/domain/users.js";
import { startPlatform, type RunningPlatform } from "../platform/platform.js";
import { onParentExit } from "../redis/process.js";
import { lineSupervisionLog, parentDeathWrapper } from "../redis/server.js";
import { parsePort, printable } from "./common.js";
import { DEV_STATE_DIR, startDevState } from "./dev-state.js";
import { describeChanges, watchSources, type Change, type SourceWatcher } from "./source-watcher.js";

const DEFAULT_PORT = 42_000;
const TEAM = "dev";
const DEMO_APP = "demo";
const GENERATED_ADMIN_EMAIL = "admin@dev.localhost";
/** Changes closer together than this are one restart (an editor's save is several events). */
const DEBOUNCE_MS = 200;
/** The project's settings file, read by its start script and by dev. */
const ENV_FILE = ".env";
/** How long a provider has to stop on SIGTERM before it is killed. */
const STOP_GRACE_MS = 10_000;
const POLL_MS = 100;
/** The address dev gives the provider and registers: loopback, as the platform it runs. */
const LOOPBACK = "127.0.0.1";
/** The template's setting for the registry's store; "memory" (or none) makes dev give its own. */
const REGISTRY_SETTING = "REGISTRY_STORE";

interface DevFlags {
  port: number;
  dir: string;
  actions?: string;
}

interface Project {
  dir: string;
  serviceId: string;
  startScript: string;
  /** What is watched: src/ when the project has one, else the project's folder. */
  sources: string;
  /** The module declaring the provider's actions, when it has one. */
  actionsModule?: string;
  /** The settings at start: the project's .env, under the process's environment. */
  settings: NodeJS.Dict<string>;
}

interface ProjectPackage {
  scripts?: { start?: unknown };
  providerKit?: { serviceId?: unknown; actions?: unknown };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function registerDev(program: Command): void {
  program
    .command("dev")
    .description(
      "run the provider project in this directory on a local platform: the provider restarted on every change to its sources or .env, " +
        "its service registered with its plans and actions, a team and a demo app",
    )
    .option("--port <port>", "the platform's port (0: any free port)", parsePort, DEFAULT_PORT)
    .option("--dir <path>", "project directory", ".")
    .option("--actions <module>", "module exporting the provider's declareActions(...) as `actions` (default: package.json providerKit.actions, else src/actions.ts when it exists)")
    .addHelpText(
      "after",
      [
        "",
        "Environment (then the project's .env):",
        "  PLATFORM_ADMIN_EMAIL      the platform's admin (default: a generated one, printed once)",
        "  PLATFORM_ADMIN_PASSWORD   its password, 6 to 50 characters",
        "  PORT                      the provider's port (unset or 0: a free port)",
        "  PROVIDER_USERNAME         the user the platform sends (default: the service id)",
        "  PROVIDER_PASSWORD         the password it sends (default: a generated one, given to the provider)",
      ].join("\n"),
    )
    .action(async (flags: DevFlags, command: Command) => {
      const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: EXIT.usage, code: "provider-kit.usage" });
      const { PLATFORM_ADMIN_EMAIL: email, PLATFORM_ADMIN_PASSWORD: password } = process.env;
      // Read once: the provider started below does not inherit them.
      delete process.env.PLATFORM_ADMIN_EMAIL;
      delete process.env.PLATFORM_ADMIN_PASSWORD;
      if (Boolean(email) !== Boolean(password)) usage("set both PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD, or neither (a generated admin is printed).");
      let project: Project;
      try {
        project = await readProject(path.resolve(flags.dir), flags.actions);
      } catch (error) {
        return usage((error as Error).message);
      }
      const admin = email && password ? { email, password, generated: false } : { email: GENERATED_ADMIN_EMAIL, password: randomBytes(18).toString("base64url"), generated: true };
      await runDev(project, flags.port, admin);
    });
}

async function readProject(dir: string, actionsFlag: string | undefined): Promise<Project> {
  const packageFile = path.join(dir, "package.json");
  if (!existsSync(packageFile)) throw new Error(`No package.json in ${dir}: run this in a project made by \`provider-kit init\`, or pass --dir <project>.`);
  const pkg = JSON.parse(await readFile(packageFile, "utf8")) as ProjectPackage;
  const serviceId = pkg.providerKit?.serviceId;
  if (typeof serviceId !== "string" || !SERVICE_NAME_PATTERN.test(serviceId)) {
    throw new Error(
      `${packageFile} has no valid providerKit.serviceId: add "providerKit": {"serviceId": "my-service"} ` +
        "(lower-case letters, digits and dashes, starting with a letter, at most 40 characters).",
    );
  }
  const startScript = pkg.scripts?.start;
  if (typeof startScript !== "string" || startScript.trim() === "") {
    throw new Error(`${packageFile} has no "start" script: add the command that starts the provider (e.g. "node --env-file=.env --import tsx src/main.ts").`);
  }
  const configured = actionsFlag ?? (typeof pkg.providerKit?.actions === "string" ? pkg.providerKit.actions : undefined);
  const actionsModule = configured !== undefined ? path.resolve(dir, configured) : [path.join(dir, "src", "actions.ts")].find((file) => existsSync(file));
  if (actionsModule !== undefined && !existsSync(actionsModule)) throw new Error(`The actions module ${actionsModule} does not exist: fix --actions or package.json providerKit.actions.`);
  const src = path.join(dir, "src");
  return { dir, serviceId, startScript, sources: existsSync(src) ? src : dir, actionsModule, settings: await readSettings(dir) };
}

/** The project's settings: its .env, under the process's environment (which wins, as for the provider). */
async function readSettings(dir: string): Promise<NodeJS.Dict<string>> {
  const envFile = path.join(dir, ENV_FILE);
  const dotEnv = existsSync(envFile) ? parseEnv(await readFile(envFile, "utf8")) : {};
  return { ...dotEnv, ...process.env };
}

/** A port free on loopback now, for the provider: it must keep one address across restarts, the one registered. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
  const { port } = server.address() as { port: number };
  await new Promise((closed) => server.close(closed));
  return port;
}

/** The dev command's own lines, set apart from the provider's log (coloured on a terminal that shows colours). */
function terminal() {
  const color = colorOn(process.stdout);
  const paint = (code: number, text: string) => (color ? `\u001b[${code}m${text}\u001b[0m` : text);
  return {
    say: (line: string) => process.stdout.write(`${paint(36, "dev:")} ${printable(line)}\n`),
    warn: (line: string) => process.stdout.write(`${paint(31, "dev:")} ${paint(31, printable(line))}\n`),
    plain: (line: string) => process.stdout.write(`${line}\n`),
  };
}

/** Whether any process of the group `pgid` is left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * The provider, as its start script runs it, in a process group of its own: the terminal's Ctrl-C
 * reaches only this command, which stops the provider (and whatever its script started) itself.
 * The script's shell gets SIGTERM when dev dies, even by SIGKILL (`parentDeathWrapper`); a
 * provider made by `init` stops when its shell is gone.
 */
class ProviderProcess {
  private readonly child: ChildProcess;
  readonly pid: number;
  /** How it ended: "code 1", "signal SIGKILL". */
  readonly exited: Promise<string>;

  constructor(project: Project, env: NodeJS.ProcessEnv, wrapper: string[]) {
    const [command, ...args] = [...wrapper, "/bin/sh", "-c", project.startScript];
    this.child = spawn(command, args, { cwd: project.dir, env, detached: true, stdio: ["ignore", "inherit", "inherit"] });
    this.pid = this.child.pid!;
    this.exited = new Promise((resolve) => this.child.once("exit", (code, signal) => resolve(signal ? `signal ${signal}` : `code ${code}`)));
  }

  /** SIGTERM to its group, SIGKILL after the grace period; resolves once no process of the group is left. */
  async stop(): Promise<void> {
    signalGroup(this.pid, "SIGTERM");
    const deadline = Date.now() + STOP_GRACE_MS;
    while (groupAlive(this.pid)) {
      if (Date.now() > deadline) signalGroup(this.pid, "SIGKILL");
      await sleep(POLL_MS);
    }
  }

  kill(): void {
    signalGroup(this.pid, "SIGKILL");
  }
}

/** Whether something accepts connections at `port` on loopback. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

/**
 * Resolves true once the provider listens on `port`, false if it exits or `cancelled()` first.
 * A connection, not a request: the probe stays out of the provider's log.
 */
async function answers(provider: ProviderProcess, port: number, cancelled: () => boolean): Promise<boolean> {
  let exited = false;
  void provider.exited.then(() => (exited = true));
  while (!exited && !cancelled()) {
    if (await listening(port)) return true;
    await sleep(POLL_MS);
  }
  return false;
}

/** A path relative to the project, for the terminal. */
const shown = (project: Project, file: string) => path.relative(project.dir, file) || ".";

/** Whether a changed file is a source worth a restart (not an editor's swap file, a dependency or a build). */
function isSource(relative: string): boolean {
  return !relative.split(path.sep).some((part) => part.startsWith(".") || part === "node_modules" || part === "dist" || part.endsWith("~"));
}

async function runDev(project: Project, port: number, admin: { email: string; password: string; generated: boolean }): Promise<void> {
  const out = terminal();
  const settings = project.settings;
  const wantedPort = settings.PORT && settings.PORT !== "0" ? Number(settings.PORT) : await freePort();
  if (!Number.isInteger(wantedPort) || wantedPort < 1 || wantedPort > 65535) {
    process.stderr.write(`error: PORT must be a port number (1 to 65535) or 0 for a free one, got "${settings.PORT}": fix it in the environment or .env.\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const username = settings.PROVIDER_USERNAME || project.serviceId;
  const password = settings.PROVIDER_PASSWORD || randomBytes(24).toString("base64url");
  const endpoint = `http://${LOOPBACK}:${wantedPort}`;

  let platform: RunningPlatform;
  try {
    platform = await startPlatform({
      port,
      host: "127.0.0.1",
      admin,
      state: { kind: "memory" },
      version: ownPackage().pkg.version,
      say: out.say,
      providerCalls: { print: (line) => out.plain(printable(line)) },
      report: (error) => process.stderr.write(`platform error: ${(error as Error)?.stack ?? String(error)}\n`),
    });
  } catch (error) {
    process.stderr.write(`error: the local platform could not start on port ${port}: ${(error as Error).message}. Pass --port <n> for another port (0: any free one).\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const { context } = platform;
  try {
    await register(context, project, admin.email, { username, password, endpoint });
  } catch (error) {
    await platform.close();
    process.stderr.write(`error: registering the service ${project.serviceId} failed: ${(error as Error).message}\n`);
    process.exitCode = EXIT.usage;
    return;
  }

  const state = await startDevState(project.dir, lineSupervisionLog("registry: ", out.say, out.warn), process.env.REDIS_SERVER).catch((error: unknown) => {
    out.warn(`${(error as Error).message} Without it, a provider whose ${REGISTRY_SETTING} is memory forgets its instances at each restart.`);
    return undefined;
  });
  const stopState = async () => {
    await state?.stop().catch((error: unknown) => out.warn(`stopping the registry's redis-server failed: ${(error as Error).message}`));
  };

  // The address and credentials the service was registered with stay; the other settings are read again from .env at each restart.
  const registered = { PORT: String(wantedPort), PROVIDER_USERNAME: username, PROVIDER_PASSWORD: password };
  /** What dev gives the provider beside its settings: its own registry unless the settings name one, a data folder, loopback, readable logs. */
  const given = (current: NodeJS.Dict<string>): NodeJS.Dict<string> => ({
    ...(state && isMemory(current[REGISTRY_SETTING]) ? { [REGISTRY_SETTING]: state.registryUrl } : {}),
    ...(state && !current.DATA_DIR ? { DATA_DIR: state.dataDir } : {}),
    HOST: LOOPBACK,
    LOG_FORMAT: current.LOG_FORMAT || "pretty",
  });
  const providerEnv = (current: NodeJS.Dict<string>): NodeJS.ProcessEnv => ({ ...current, ...registered, ...given(current), PATH: searchPath(project.dir) });
  if (state && isMemory(settings[REGISTRY_SETTING])) {
    out.say(`registry: a redis-server in ${DEV_STATE_DIR}, given to the provider as ${REGISTRY_SETTING}: instances outlive its restarts`);
  }
  const wrapper = await parentDeathWrapper();
  let provider = new ProviderProcess(project, providerEnv(settings), wrapper);
  let stopping = false;
  // Restarts one at a time; changes during one make one more.
  let restarting = false;
  let again: string | undefined;
  const watchers: SourceWatcher[] = [];

  let shutdown: Promise<void> | undefined;
  const stop = (signal: NodeJS.Signals) => {
    if (shutdown) {
      // The second Ctrl-C: no more waiting.
      provider.kill();
      process.exit(SIGNAL_EXIT[signal] ?? EXIT.ok);
    }
    stopping = true;
    out.say("stopping the provider and the platform (Ctrl-C again to kill them)");
    for (const watcher of watchers) watcher.close();
    shutdown = (async () => {
      await provider.stop();
      await stopState();
      await platform.close();
      process.exit(SIGNAL_EXIT[signal] ?? EXIT.ok);
    })();
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  // Started by a shell or npm that is killed without passing a signal on: stop with it.
  onParentExit(() => stop("SIGTERM"));

  const watchExit = (started: ProviderProcess) =>
    void started.exited.then((how) => {
      if (!stopping && !restarting && started === provider) {
        out.warn(`the provider exited (${how}): fix what its output says; it restarts on the next change to ${project.sources === project.dir ? "its sources" : `${shown(project, project.sources)}/`}`);
      }
    });
  watchExit(provider);
  out.say(`provider started (pid ${provider.pid}): ${project.startScript}, on ${endpoint}`);
  const first = provider;
  void answers(first, wantedPort, () => stopping || restarting).then((up) => up && out.say(`provider answers on ${endpoint}`));

  await updateActions(context, project, admin.email, out.warn);
  out.say(`service ${project.serviceId} registered (its plans come from the provider), team ${TEAM}, app ${DEMO_APP}`);
  if (admin.generated) out.say(`admin ${admin.email}, password ${admin.password} (generated; set PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD to choose them)`);
  out.plain(`Console: ${platform.url}  (log in as ${admin.email})`);
  out.plain(`tsuru:   tsuru target-add dev ${platform.url} -s && tsuru login ${admin.email}`);

  /** The settings now, saying which changes to .env wait for the next `provider-kit dev`. */
  const currentSettings = async () => {
    const current = await readSettings(project.dir).catch((error: unknown) => {
      out.warn(`${ENV_FILE} could not be read (${(error as Error).message}): the provider keeps the settings it started with`);
      return settings;
    });
    for (const key of Object.keys(registered)) {
      if (current[key] !== settings[key]) {
        out.warn(`${key} changed in ${ENV_FILE}: the platform keeps the one the service was registered with until provider-kit dev starts again`);
      }
    }
    return current;
  };

  const restart = async (why: string) => {
    if (restarting) {
      again = why;
      return;
    }
    restarting = true;
    for (let reason: string | undefined = why; reason !== undefined && !stopping; reason = again) {
      again = undefined;
      out.say(`${reason}: restarting the provider`);
      await provider.stop();
      if (stopping) break;
      provider = new ProviderProcess(project, providerEnv(await currentSettings()), wrapper);
      watchExit(provider);
      // A newer change, or Ctrl-C, does not wait for a provider that never answers.
      if (await answers(provider, wantedPort, () => stopping || again !== undefined)) {
        out.say(`provider restarted (pid ${provider.pid})`);
        await updateActions(context, project, admin.email, out.warn);
        await sayUnknownInstances(context, project, admin.email, out.warn);
      } else if (!stopping && again === undefined) {
        out.warn(`the provider failed to start (${await provider.exited}): fix what its output says; it restarts on the next change`);
      }
    }
    restarting = false;
  };

  const onChange = (root: string) => (changes: Change[]) => void restart(describeChanges(changes, (file) => shown(project, path.join(root, file))));
  const onError = (error: Error) => out.warn(`${error.message}: changes there do not restart the provider`);
  try {
    watchers.push(await watchSources(project.sources, { include: isSource, onChange: onChange(project.sources), onError, quietMs: DEBOUNCE_MS }));
    // The project's folder alone, for .env (when the sources are that folder, isSource leaves dot files out).
    watchers.push(await watchSources(project.dir, { include: (file) => file === ENV_FILE, onChange: onChange(project.dir), onError, quietMs: DEBOUNCE_MS }));
  } catch (error) {
    out.warn(`${(error as Error).message}: the provider will not restart on changes`);
  }
  if (stopping) for (const watcher of watchers) watcher.close();
}

/** A registry setting that keeps nothing across a restart: dev gives its own instead. */
const isMemory = (setting: string | undefined) => !setting || setting === "memory";

/** After a restart: the platform's instances the provider no longer knows, in one line (a registry kept in its memory). */
async function sayUnknownInstances(context: Context, project: Project, adminEmail: string, warn: (line: string) => void): Promise<void> {
  const unknown = await instancesUnknownToProvider(context, await actorOf(context, adminEmail), project.serviceId).catch(() => []);
  if (unknown.length === 0) return;
  warn(
    `the provider does not know ${unknown.length === 1 ? "the instance" : `the ${unknown.length} instances`} ${unknown.join(", ")} now (404): ` +
      `its registry did not outlive the restart; keep it in Redis (${REGISTRY_SETTING}) to keep them`,
  );
}

/** The PATH an npm script gets: each node_modules/.bin from the project up, then the caller's. */
function searchPath(dir: string): string {
  const bins: string[] = [];
  for (let at = dir; ; at = path.dirname(at)) {
    bins.push(path.join(at, "node_modules", ".bin"));
    if (path.dirname(at) === at) break;
  }
  return [...bins, process.env.PATH ?? ""].join(path.delimiter);
}

/** The admin's team, the service (owned by that team), and the demo app. */
async function register(context: Context, project: Project, adminEmail: string, provider: { username: string; password: string; endpoint: string }): Promise<void> {
  await createTeam(context, await actorOf(context, adminEmail), TEAM);
  const admin = await actorOf(context, adminEmail);
  // Variant current: the platform of today, which the conformance kit plays by default.
  const manifest = manifestOf({ id: project.serviceId, username: provider.username, password: provider.password, endpoint: { production: provider.endpoint }, team: TEAM, variant: "current" });
  await registerService(context, admin, manifest);
  await createApp(context, admin, { name: DEMO_APP, platform: "static", teamOwner: TEAM });
}

/** The service's actions manifest, from the project's declarations as they are now. */
async function updateActions(context: Context, project: Project, adminEmail: string, warn: (line: string) => void): Promise<void> {
  if (project.actionsModule === undefined) return;
  try {
    const manifest = actionsManifest(await loadActions(project.actionsModule, "actions"));
    await setActionsManifest(context, await actorOf(context, adminEmail), project.serviceId, manifest);
  } catch (error) {
    warn(`the actions of ${shown(project, project.actionsModule)} were not registered: ${(error as Error).message}`);
  }
}
