/**
 * `GET /deploys?app=&service=`, `GET /deploys/<id>` and, beyond the spec, `POST /apps/<a>/deploy`
 * (`{image}` or `{commit}`), answered in the shape of the variant chosen with --api-variant.
 */
import { z } from "zod";
import { deployApp, deployView, findDeploy, listDeploys } from "../domain/deploys.js";
import { badRequest } from "../domain/errors.js";
import { APP_NAME, SERVICE_NAME } from "../domain/model.js";
import { body, nameParam, query, sendJson, type Route } from "./handler.js";

const DEPLOY = z.object({ image: z.string().optional(), commit: z.string().optional(), origin: z.string().max(40).optional() });
const DEPLOY_ID = /^[0-9a-f]{1,64}$/;

export const deployList: Route = async ({ req, res, context, actor }) => {
  const app = query(req, "app");
  const service = query(req, "service");
  if (app !== undefined && !APP_NAME.test(app)) throw badRequest(`Invalid app filter "${app.slice(0, 60)}".`);
  if (service !== undefined && !SERVICE_NAME.test(service)) throw badRequest(`Invalid service filter "${service.slice(0, 60)}".`);
  const deploys = await listDeploys(context, actor, { app, service });
  sendJson(res, 200, deploys.map((deploy) => deployView(deploy, context.config.apiVariant)));
};

export const deployShow: Route = async ({ req, res, context, actor }) => {
  const id = String(req.params.deploy ?? "");
  if (!DEPLOY_ID.test(id)) throw badRequest(`Invalid deploy id "${id.slice(0, 60)}".`);
  sendJson(res, 200, deployView(await findDeploy(context, actor, id), context.config.apiVariant));
};

export const deployCreate: Route = async ({ req, res, context, actor }) => {
  const deploy = await deployApp(context, actor, nameParam(req, "app", "app"), body(req, DEPLOY));
  sendJson(res, 200, deployView(deploy, context.config.apiVariant));
};
