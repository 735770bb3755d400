/**
 * `/1.31/services/<s>/manifest` (the service's actions) and `/1.31/services/<s>/actions/<action>/<team>`
 * (granting and revoking the permission `service-action.<s>.<action>`).
 */
import { actionGrantsOf, actionsManifestOf, grantAction, ManifestConflict, revokeAction, setActionsManifest } from "../domain/service-actions.js";
import { nameParam, sendEmpty, sendJson, type Route } from "./handler.js";

export const manifestUpdate: Route = async ({ req, res, context, actor }) => {
  try {
    await setActionsManifest(context, actor, nameParam(req, "service", "service"), req.body);
  } catch (error) {
    // The platform answers a manifest's conflicts as JSON, for its client to list them.
    if (!(error instanceof ManifestConflict)) throw error;
    sendJson(res, 409, error.detail);
    return;
  }
  sendEmpty(res, 200);
};

export const manifestShow: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await actionsManifestOf(context, actor, nameParam(req, "service", "service")));
};

export const actionGrantList: Route = async ({ req, res, context, actor }) => {
  sendJson(res, 200, await actionGrantsOf(context, actor, nameParam(req, "service", "service")));
};

export const actionGrant: Route = async ({ req, res, context, actor }) => {
  await grantAction(context, actor, nameParam(req, "service", "service"), String(req.params.action), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};

export const actionRevoke: Route = async ({ req, res, context, actor }) => {
  await revokeAction(context, actor, nameParam(req, "service", "service"), String(req.params.action), nameParam(req, "team", "team"));
  sendEmpty(res, 200);
};
