/**
 * Apps and their units. Units are records, as in the platform's own test provisioner:
 * `<app>-<n>` at `10.10.10.<n>` (then 10.10.11.x...), state `started`; `n` counts across the platform.
 */
import type { AppSpec } from "provider-kit/contract";
import { placementOf, poolsOf, type ApiVariant, type PlatformConfig } from "./config.js";
import { appLog, exclusive, sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, conflict, forbidden, notFound } from "./errors.js";
import { APP_NAME, type App, type Unit } from "./model.js";
import { checkQuota } from "./quota.js";

export const appLock = (name: string) => `app:${name}`;
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

export const addressOf = (app: App) => app.address ?? `${app.name}.localhost`;

/** How providers see the app: its address and where it runs. */
export function appSpec(config: PlatformConfig, app: App): AppSpec {
  return {
    name: app.name,
    hosts: [addressOf(app)],
    internalHosts: [`${app.name}.${app.pool}.local`],
    placement: placementOf(config, app.pool),
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
  const { platforms } = context.config;
  if (!platforms.includes(wanted.platform)) {
    throw badRequest(`Invalid platform "${wanted.platform.slice(0, 60)}": use one of ${platforms.join(", ")}.`);
  }
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
  const pool = choosePool(context, owner, wanted.pool);
  return exclusive(context, [appLock(wanted.name), quotaLock(actor.email)], async () => {
    if (await context.store.get("apps", wanted.name)) throw conflict(`There is already an app named "${wanted.name}".`);
    await checkQuota(context, actor.email);
    // An app starts with one unit: `run` needs somewhere to run before any deploy.
    const app: App = {
      name: wanted.name,
      platform: wanted.platform,
      teamOwner: owner,
      teams: [owner],
      pool,
      owner: actor.email,
      units: await newUnits(context, wanted.name, 1),
      env: [],
      serviceEnvs: [],
    };
    await context.store.put("apps", app.name, app);
    await appLog(context, app.name, `app created on team ${owner}`);
    return { status: "success", repository_url: `git@localhost:${app.name}.git`, ip: addressOf(app) };
  });
}

const quotaLock = (email: string) => `quota:${email}`;

/** The pool asked for, when the owner team may use it; else the first pool it may use. */
function choosePool(context: Context, team: string, wanted: string | undefined): string {
  const pools = poolsOf(context.config, team).map((pool) => pool.name);
  if (wanted === undefined || wanted === "") {
    if (pools.length === 0) throw forbidden(`The team "${team}" may use no pool: start the platform with --pool <name>=${team}.`);
    return pools[0]!;
  }
  if (!pools.includes(wanted)) throw badRequest(`Invalid pool "${wanted.slice(0, 60)}" for the team "${team}": use one of ${pools.join(", ") || "(none)"}.`);
  return wanted;
}

/** `POST /apps/<a>/pool`: moves the app to another pool its owner team may use. */
export async function changePool(context: Context, actor: Actor, name: string, pool: string): Promise<void> {
  await exclusive(context, [appLock(name)], async () => {
    const app = await appFor(context, actor, name);
    const chosen = choosePool(context, app.teamOwner, pool);
    await context.store.put("apps", name, { ...app, pool: chosen });
    await appLog(context, name, `pool changed from ${app.pool} to ${chosen}`);
  });
}

/** `PUT /swap`: the two apps exchange their addresses. */
export async function swapApps(context: Context, actor: Actor, first: string, second: string): Promise<void> {
  if (first === second) throw badRequest("Give two different apps to swap.");
  await exclusive(context, [appLock(first), appLock(second)], async () => {
    const one = await appFor(context, actor, first);
    const other = await appFor(context, actor, second);
    await context.store.put("apps", first, { ...one, address: addressOf(other) });
    await context.store.put("apps", second, { ...other, address: addressOf(one) });
    await appLog(context, first, `address swapped with ${second}: now ${addressOf(other)}`);
    await appLog(context, second, `address swapped with ${first}: now ${addressOf(one)}`);
  });
}

export async function newUnits(context: Context, app: string, count: number): Promise<Unit[]> {
  const units: Unit[] = [];
  for (let index = 0; index < count; index++) {
    const n = await context.store.next("units");
    units.push({ name: `${app}-${n}`, ip: unitAddress(n), state: "started" });
  }
  return units;
}

/** `10.10.10.<n>` for the first 254 units, then on through 10.10.11.1...: always a valid address (deploys use many). */
export function unitAddress(n: number): string {
  const block = Math.floor((n - 1) / 254);
  return `10.10.${10 + block}.${((n - 1) % 254) + 1}`;
}

export async function listApps(context: Context, actor: Actor) {
  const apps = (await context.store.all("apps")).filter((app) => sharesTeam(actor, app.teams));
  return apps
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((app) => ({
      Ip: addressOf(app),
      Name: app.name,
      Units: app.units.map((unit) => ({ Name: unit.name, State: unit.state })),
    }));
}

/** The app as `GET /apps/<a>` shows it; `Pool` is variant 1 only. */
export function appView(app: App, variant: ApiVariant) {
  return {
    Name: app.name,
    Framework: app.platform,
    Repository: `git@localhost:${app.name}.git`,
    State: app.units.length > 0 ? "started" : "stopped",
    Units: app.units.map((unit) => ({ Ip: unit.ip, Name: unit.name, State: unit.state })),
    Teams: app.teams,
    ...(variant === 1 ? { Pool: app.pool } : {}),
    TeamOwner: app.teamOwner,
    Ip: addressOf(app),
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
