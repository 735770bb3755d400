/** `/services`: the catalog, registered from raw YAML manifests. */
import type { Response } from "express";
import { sharesTeam } from "../domain/context.js";
import { createService, findService, grantService, listServices, providerOf, removeService, revokeService, serviceDoc, serviceInstances, servicePlans, setDoc, updateService } from "../domain/services.js";
import { nameParam, query, sendEmpty, sendJson, sendText, text, type Route } from "./handler.js";

/** The header naming the brokers a listing left out (their catalog could not be had in time; the terminal says why). */
const BROKERS_LEFT_OUT_HEADER = "X-Brokers-Left-Out";

/** The listing in the real platform's shape; the brokers left out in a header, which its clients ignore. */
export function sendServiceList(res: Response, { entries, leftOut }: Awaited<ReturnType<typeof listServices>>): void {
  if (leftOut.length > 0) res.setHeader(BROKERS_LEFT_OUT_HEADER, leftOut.join(", "));
  sendJson(res, 200, entries);
}

export const serviceList: Route = async ({ res, context, actor }) => {
  sendServiceList(res, await listServices(context, actor));
};

export const serviceCreate: Route = async ({ req, res, context, actor }) => {
  await createService(context, actor, text(req));
  sendEmpty(res, 200);
};

export const serviceUpdate: Route = async ({ req, res, context, actor }) => {
  await updateService(context, actor, text(req));
  sendEmpty(res, 200);
};

export const serviceRemove: Route = async ({ req, res, context, actor }) => {
  await removeService(context, actor, nameParam(req, "service", "service"));
  sendEmpty(res, 204);
};

export const serviceShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await serviceInstances(context, actor, nameParam(req, "service", "service")));
};

/** `?pool=<p>`: the plans of that pool, for a multi-cluster service. */
export const planList: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await servicePlans(context, actor, nameParam(req, "service", "service"), query(req, "pool")));
};

/** Beyond providerOf, for the console: whether to offer a pool, and whether the caller may read the action grants. */
export const providerShow: Route = async ({ req, res, context, actor }) => {
  const name = nameParam(req, "service", "service");
  const provider = await providerOf(context, actor, name);
  const service = await findService(context, name);
  sendJson(res, 200, { ...provider, multiCluster: service.multiCluster === true, owner: sharesTeam(actor, service.ownerTeams) });
};

export const docShow: Route = async ({ req, res, context, actor }) => {
  sendText(res, 200, await serviceDoc(context, actor, nameParam(req, "service", "service")));
};

export const docUpdate: Route = async ({ req, res, context, actor }) => {
  await setDoc(context, actor, nameParam(req, "service", "service"), text(req));
  sendEmpty(res, 200);
};

export const serviceGrant: Route = async ({ req, res, context, actor }) => {
  await grantService(context, actor, nameParam(req, "service", "service"), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};

export const serviceRevoke: Route = async ({ req, res, context, actor }) => {
  await revokeService(context, actor, nameParam(req, "service", "service"), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};
