/**
 * `/services/instances`: create, remove, bind, unbind, status, team access. The real platform's
 * escape hatches for a provider that cannot undo: `?unbindall=true` and `?ignoreerrors=true` on
 * removal, `?force=true` on unbind.
 * `/services/instances/permission/<x>/<team>` grants a team access to the instance `<x>`
 * (the spec calls the segment a service name; the platform's router names it the instance).
 */
import { z } from "zod";
import { bind, unbind, unbindEveryApp } from "../domain/binding.js";
import { createInstance, grantInstance, instanceData, instanceStatus, removeInstance, revokeInstance } from "../domain/instances.js";
import { PRIVATE_SHOWN } from "../domain/env.js";
import { listServices } from "../domain/services.js";
import { body, flag, nameParam, query, sendEmpty, sendJson, sendText, type Route } from "./handler.js";
import { sendServiceList } from "./services.js";
import { badRequest } from "../domain/errors.js";
import { APP_NAME } from "../domain/model.js";

const NEW_INSTANCE = z.object({
  name: z.string(),
  service_name: z.string(),
  plan: z.string().max(100).optional(),
  owner: z.string().max(100).optional(),
  pool: z.string().max(100).optional(),
});

export const instanceList: Route = async ({ req, res, context, actor }) => {
  const app = query(req, "app");
  if (app !== undefined && !APP_NAME.test(app)) throw badRequest(`Invalid app name "${app.slice(0, 60)}".`);
  sendServiceList(res, await listServices(context, actor, app));
};

export const instanceCreate: Route = async ({ req, res, context, actor }) => {
  const wanted = body(req, NEW_INSTANCE);
  await createInstance(context, actor, {
    name: wanted.name,
    service: wanted.service_name,
    plan: wanted.plan || undefined,
    owner: wanted.owner || undefined,
    pool: wanted.pool || undefined,
  });
  // createServiceInstance answers 201, as today's client route does.
  sendEmpty(res, 201);
};

export const instanceRemove: Route = async ({ req, res, context, actor }) => {
  const name = nameParam(req, "instance", "instance");
  const [unbindAll, ignoreErrors] = [flag(req, "unbindall"), flag(req, "ignoreerrors")];
  if (unbindAll) await unbindEveryApp(context, actor, name);
  await removeInstance(context, actor, name, { ignoreErrors });
  sendEmpty(res, 200);
};

export const instanceShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await instanceData(context, actor, nameParam(req, "instance", "instance")));
};

export const instanceStatusShow: Route = async ({ req, res, context, actor }) => {
  sendText(res, 200, await instanceStatus(context, actor, nameParam(req, "instance", "instance")));
};

/** The spec's map of the variables exported, their values hidden as `env` hides private ones: the platform shows only the names. */
export const instanceBind: Route = async ({ req, res, context, actor }) => {
  const names = await bind(context, actor, nameParam(req, "instance", "instance"), nameParam(req, "app", "app"));
  sendJson(res, 200, Object.fromEntries(names.map((name) => [name, PRIVATE_SHOWN])));
};

export const instanceUnbind: Route = async ({ req, res, context, actor }) => {
  await unbind(context, actor, nameParam(req, "instance", "instance"), nameParam(req, "app", "app"), { force: flag(req, "force") });
  sendEmpty(res, 200);
};

export const instanceGrant: Route = async ({ req, res, context, actor }) => {
  await grantInstance(context, actor, nameParam(req, "instance", "instance"), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};

export const instanceRevoke: Route = async ({ req, res, context, actor }) => {
  await revokeInstance(context, actor, nameParam(req, "instance", "instance"), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};
