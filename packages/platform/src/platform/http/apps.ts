/** `/apps`: apps, their units, environment, restart and log. */
import { z } from "zod";
import { appFor, appLogs, appView, changePool, createApp, listApps, restartApp, swapApps } from "../domain/apps.js";
import { addUnits, removeApp, removeUnits } from "../domain/binding.js";
import { revealedEnv, setEnv, shownEnv, unsetEnv } from "../domain/env.js";
import { badRequest } from "../domain/errors.js";
import { APP_NAME } from "../domain/model.js";
import { body, nameParam, query, sendEmpty, sendJson, text, type Route } from "./handler.js";

const NAME = z.string().max(100);
const NEW_APP = z.object({ name: z.string(), platform: NAME.min(1), teamOwner: NAME.optional(), pool: NAME.optional() });
const VALUE = z.string().max(64 * 1024);
/** `{"envs":[{"name","value"}],"private":bool}`, the fields the platform's client sends. */
const SET_ENV = z.object({ envs: z.array(z.object({ name: NAME, value: VALUE })).min(1), private: z.boolean().optional() });
const UNSET_ENV = z.object({ names: z.array(NAME).min(1) });

export const appList: Route = async ({ res, context, actor }) => {
  sendJson(res, 200, await listApps(context, actor));
};

export const appShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, appView(await appFor(context, actor, nameParam(req, "app", "app")), context.config.apiVariant));
};

/** `created`: the spec's 200, or 201 on today's client's versioned route, as `createApp` answers. */
export const appCreate = (created: 200 | 201): Route => async ({ req, res, context, actor }) => {
  const wanted = body(req, NEW_APP);
  // Today's client sends every field, empty when not given.
  sendJson(res, created, await createApp(context, actor, { ...wanted, teamOwner: wanted.teamOwner || undefined }));
};

export const appRemove: Route = async ({ req, res, context, actor }) => {
  await removeApp(context, actor, nameParam(req, "app", "app"));
  sendEmpty(res, 200);
};

export const appRestart: Route = async ({ req, res, context, actor }) => {
  await restartApp(context, actor, nameParam(req, "app", "app"));
  sendEmpty(res, 200);
};

/** `PUT /swap?app1=&app2=`. */
export const appSwap: Route = async ({ req, res, context, actor }) => {
  const [first, second] = ["app1", "app2"].map((param) => {
    const value = query(req, param) ?? "";
    if (!APP_NAME.test(value)) throw badRequest(`Give the apps to swap as ?app1=<app>&app2=<app> (${param} is "${value.slice(0, 60)}").`);
    return value;
  });
  await swapApps(context, actor, first!, second!);
  sendEmpty(res, 200);
};

/** `POST /apps/<a>/pool`: the pool's name as the plain-text body, or `?pool=`. */
export const poolChange: Route = async ({ req, res, context, actor }) => {
  const pool = (query(req, "pool") ?? text(req)).trim();
  if (pool === "") throw badRequest("Send the pool's name as the body (or ?pool=<name>): GET /pools lists yours.");
  await changePool(context, actor, nameParam(req, "app", "app"), pool);
  sendEmpty(res, 200);
};

/** `GET /apps/<a>/log` (and variant 2's `/logs`). */
export const appLog: Route = async ({ req, res, context, actor }) => {
  const lines = Number(query(req, "lines"));
  if (!Number.isInteger(lines) || lines < 1) throw badRequest("Give the number of lines to show: ?lines=<a whole number>.");
  const source = query(req, "source");
  const unit = query(req, "unit");
  const entries = (await appLogs(context, actor, nameParam(req, "app", "app"))).filter(
    (entry) => (source === undefined || entry.Source === source) && (unit === undefined || entry.Unit === unit),
  );
  sendJson(res, 200, entries.slice(-lines));
};

export const envShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await shownEnv(context, actor, nameParam(req, "app", "app")));
};

/** `GET /apps/<a>/env/<name>` (beyond the spec): one variable, private values shown. */
export const envReveal: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await revealedEnv(context, actor, nameParam(req, "app", "app"), String(req.params.name)));
};

export const envSet: Route = async ({ req, res, context, actor }) => {
  const given = body(req, SET_ENV);
  const variables = given.envs.map(({ name, value }) => ({ name, value, public: given.private !== true }));
  await setEnv(context, actor, nameParam(req, "app", "app"), variables);
  sendEmpty(res, 200);
};

/** Names from the JSON body `{"names":[...]}` or, as the platform's client sends them, `?env=A&env=B`. */
export const envUnset: Route = async ({ req, res, context, actor }) => {
  const fromQuery = req.query.env;
  const names =
    fromQuery === undefined ? body(req, UNSET_ENV).names : (Array.isArray(fromQuery) ? fromQuery : [fromQuery]).map(String);
  await unsetEnv(context, actor, nameParam(req, "app", "app"), names);
  sendEmpty(res, 200);
};

function unitCount(raw: string): number {
  const count = Number(raw.trim());
  if (raw.trim() === "" || !Number.isInteger(count)) throw badRequest("Send the number of units as the body, e.g. 2.");
  return count;
}

export const unitsAdd: Route = async ({ req, res, context, actor }) => {
  await addUnits(context, actor, nameParam(req, "app", "app"), unitCount(text(req)));
  sendEmpty(res, 200);
};

export const unitsRemove: Route = async ({ req, res, context, actor }) => {
  await removeUnits(context, actor, nameParam(req, "app", "app"), unitCount(text(req)));
  sendEmpty(res, 200);
};
