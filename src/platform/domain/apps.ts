/**
 * Apps and their units. Units are records, as in the platform's own test provisioner:
 * `<app>-<n>` at `10.10.10.<n>`, state `started`; `n` counts across the platform.
 */
import type { AppSpec } from "../../provider-client/calls.js";
import { appLog, exclusive, sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, conflict, forbidden, notFound } from "./errors.js";
import { APP_NAME, type App, type Unit } from "./model.js";

export const appLock = (name: string) => `app:${name}`;
export const DEFAULT_POOL = "local";
export const MAX_UNITS = 100;

export async function findApp(context: Context, name: string): Promise<App> {
  const app = await context.store.get("apps", name);
  if (!app) throw notFound(`App "${name}" not found.`);
  return app;
}

export function assertAppAccess(actor: Actor, app: App): void {
  if (!sharesTeam(actor, app.teams)) throw forbidden(`You have no access to the app "${app.name}".`);
}

/** The app, when the actor may act on it. */
export async function appFor(context: Context, actor: Actor, name: string): Promise<App> {
  const app = await findApp(context, name);
  assertAppAccess(actor, app);
  return app;
}

/** How providers see the app: its address and where it runs. */
export function appSpec(app: App): AppSpec {
  return {
    name: app.name,
    hosts: [`${app.name}.localhost`],
    internalHosts: [`${app.name}.${app.pool}.local`],
    placement: { pool: app.pool, cluster: "local", provisioner: "local", addresses: [] },
  };
}

export interface NewApp {
  name: string;
  platform: string;
  teamOwner?: string;
  pool?: string;
}

export async function createApp(context: Context, actor: Actor, wanted: NewApp) {
  if (!APP_NAME.test(wanted.name)) {
    throw badRequest("Invalid app name, your app should have at most 63 characters, containing only lower case letters, numbers or dashes, starting with a letter.");
  }
  if (actor.teams.length === 0) throw forbidden("You must be a member of a team to create an app.");
  let teamOwner = wanted.teamOwner;
  if (teamOwner === undefined) {
    if (actor.teams.length > 1) {
      throw badRequest(`You belong to several teams: say which one owns the app with "teamOwner" (one of ${actor.teams.join(", ")}).`);
    }
    teamOwner = actor.teams[0]!;
  } else if (!actor.teams.includes(teamOwner) && !actor.admin) {
    throw forbidden(`You are not a member of the team "${teamOwner}".`);
  } else if (!(await context.store.get("teams", teamOwner))) {
    throw notFound(`Team "${teamOwner}" not found.`);
  }
  const owner = teamOwner;
  return exclusive(context, [appLock(wanted.name)], async () => {
    if (await context.store.get("apps", wanted.name)) throw conflict(`There is already an app named "${wanted.name}".`);
    // An app starts with one unit: there is no deploy here, and `run` needs somewhere to run.
    const app: App = {
      name: wanted.name,
      platform: wanted.platform,
      teamOwner: owner,
      teams: [owner],
      pool: wanted.pool ?? DEFAULT_POOL,
      units: await newUnits(context, wanted.name, 1),
      env: [],
      serviceEnvs: [],
    };
    await context.store.put("apps", app.name, app);
    await appLog(context, app.name, `app created on team ${owner}`);
    return { status: "success", repository_url: `git@localhost:${app.name}.git`, ip: appSpec(app).hosts[0] };
  });
}

export async function newUnits(context: Context, app: string, count: number): Promise<Unit[]> {
  const units: Unit[] = [];
  for (let index = 0; index < count; index++) {
    const n = await context.store.next("units");
    units.push({ name: `${app}-${n}`, ip: `10.10.10.${n}`, state: "started" });
  }
  return units;
}

export async function listApps(context: Context, actor: Actor) {
  const apps = (await context.store.all("apps")).filter((app) => sharesTeam(actor, app.teams));
  return apps
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((app) => ({
      Ip: appSpec(app).hosts[0],
      Name: app.name,
      Units: app.units.map((unit) => ({ Name: unit.name, State: unit.state })),
    }));
}

export function appView(app: App) {
  return {
    Name: app.name,
    Framework: app.platform,
    Repository: `git@localhost:${app.name}.git`,
    State: app.units.length > 0 ? "started" : "stopped",
    Units: app.units.map((unit) => ({ Ip: unit.ip, Name: unit.name, State: unit.state })),
    Teams: app.teams,
    Pool: app.pool,
    TeamOwner: app.teamOwner,
  };
}

export async function restartApp(context: Context, actor: Actor, name: string): Promise<void> {
  const app = await appFor(context, actor, name);
  await appLog(context, app.name, `restarting app (${app.units.length} units)`);
}

export async function appLogs(context: Context, actor: Actor, name: string) {
  const app = await appFor(context, actor, name);
  return context.store.items("log", app.name);
}
