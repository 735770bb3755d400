/**
 * The routes only today's command-line client (`tsuru`, 1.34) needs: its paths and encodings
 * (platform-notes.md, last section) over the same domain operations as the spec's routes.
 * Form bodies; bind, unbind and env-set answer a stream of newline-separated JSON messages
 * `{"Message": ...}`, a failure after the stream started as `{"Message": "", "Error": ...}`.
 * Lookups and access checks run first, so a wrong name is still an HTTP error the client shows.
 */
import type { Response } from "express";
import { z } from "zod";
import { appFor } from "../domain/apps.js";
import { bind, bindTargets, unbind } from "../domain/binding.js";
import { setEnv } from "../domain/env.js";
import { badRequest, notFound, PlatformError } from "../domain/errors.js";
import { createInstance } from "../domain/instances.js";
import { manifestOf } from "../domain/manifest.js";
import { registerService } from "../domain/services.js";
import { body, flag, nameParam, sendEmpty, sendJson, type Call, type Route } from "./handler.js";

const STREAM_TYPE = "application/x-json-stream";
const FIELD = z.string().max(1000).optional();
const SERVICE_FORM = z.object({ id: z.string().max(100), username: FIELD, password: FIELD, endpoint: FIELD, "multi-cluster": FIELD });
const INSTANCE_FORM = z.object({ name: z.string().max(100), plan: FIELD, owner: FIELD, pool: FIELD });
/** `endpoints.<cluster>=<url>`: the platform's form names for the endpoint per cluster. */
const CLUSTER_ENDPOINT = /^endpoints\.(.+)$/;
const ENV_KEY = /^Envs\.(\d{1,3})\.(Name|Value)$/;

/** `GET /1.18/auth/schemes`: the client's login asks which scheme to use; this platform has its own users. */
export const authSchemes: Route = async ({ res }) => {
  sendJson(res, 200, [{ name: "native", default: true, data: {} }]);
};

/**
 * `POST /1.0/services`: the client parsed the manifest and sends its fields; `endpoints.<cluster>`
 * as the platform's API takes them (the client sends production only); `team` is not used.
 */
export const serviceCreateForm: Route = async ({ req, res, context, actor }) => {
  const fields = body(req, SERVICE_FORM);
  const sent = req.body as Record<string, unknown>;
  // A JSON body carries them as one object, `endpoints`.
  const nested = typeof sent.endpoints === "object" && sent.endpoints !== null ? Object.entries(sent.endpoints) : [];
  const perCluster = Object.entries(sent).flatMap(([key, value]) => {
    const cluster = CLUSTER_ENDPOINT.exec(key)?.[1];
    return cluster === undefined ? [] : [[cluster, value] as const];
  });
  const endpoint = { ...Object.fromEntries([...nested, ...perCluster]), production: fields.endpoint };
  await registerService(context, actor, manifestOf({ ...fields, endpoint }));
  sendEmpty(res, 201);
};

/** `POST /1.0/services/<s>/instances`: `name, plan, owner, pool` used; `description, tag, parameters.*` not kept. */
export const instanceCreateForm: Route = async ({ req, res, context, actor }) => {
  const fields = body(req, INSTANCE_FORM);
  await createInstance(context, actor, {
    name: fields.name,
    service: nameParam(req, "service", "service"),
    plan: fields.plan || undefined,
    owner: fields.owner || undefined,
    pool: fields.pool || undefined,
  });
  sendEmpty(res, 201);
};

function startStream(res: Response, message: string): (line: { Message: string; Error?: string }) => void {
  res.writeHead(200, { "Content-Type": STREAM_TYPE });
  const write = (line: { Message: string; Error?: string }) => res.write(`${JSON.stringify(line)}\n`);
  write({ Message: message });
  return write;
}

/** Runs `work` inside a started stream: its messages, or its failure as the stream's `Error`. */
async function streamed(res: Response, first: string, work: () => Promise<string[]>): Promise<void> {
  const write = startStream(res, first);
  try {
    for (const message of await work()) write({ Message: message });
  } catch (error) {
    // The platform's own failures keep their details for its terminal, as errorAnswer does.
    const message = error instanceof PlatformError ? error.message : "The platform failed to handle this request: its terminal shows the details.";
    write({ Message: "", Error: message });
  }
  res.end();
}

async function bindingNames({ req, context, actor }: Call) {
  const service = nameParam(req, "service", "service");
  const instance = nameParam(req, "instance", "instance");
  const app = nameParam(req, "app", "app");
  const targets = await bindTargets(context, actor, instance, app);
  if (targets.instance.service !== service) throw notFound(`Service instance "${instance}" not found in the service "${service}".`);
  return { instance, app };
}

/** `PUT /1.13/services/<s>/instances/<i>/apps/<a>` (form `noRestart`). */
export const bindStream: Route = async (call) => {
  const { instance, app } = await bindingNames(call);
  await streamed(call.res, `---- Binding the instance ${instance} to the app ${app} ----\n`, async () => {
    const names = await bind(call.context, call.actor, instance, app);
    return [`---- Setting ${names.length} new environment variables ----\n`, ...names.map((name) => `${name}\n`), "---- Restarting the app ----\n"];
  });
};

/** `DELETE` on the same path (`?force=true`): the failures a forced unbind passed over are among its messages. */
export const unbindStream: Route = async (call) => {
  const { instance, app } = await bindingNames(call);
  const force = flag(call.req, "force");
  await streamed(call.res, `---- Unbinding the instance ${instance} from the app ${app} ----\n`, async () => {
    const passedOver = await unbind(call.context, call.actor, instance, app, { force });
    return [...passedOver.map((line) => `${line}\n`), "---- Restarting the app ----\n", `\nInstance "${instance}" is not bound to the app "${app}" anymore.\n`];
  });
};

/** `POST /1.0/apps/<a>/env`: form `Envs.<n>.Name`, `Envs.<n>.Value`, `Private`, `NoRestart`. */
export const envSetStream: Route = async ({ req, res, context, actor }) => {
  const app = nameParam(req, "app", "app");
  await appFor(context, actor, app);
  const fields = body(req, z.record(z.string(), z.unknown()));
  const envs = new Map<string, { name: string; value: string }>();
  for (const [key, value] of Object.entries(fields)) {
    const match = ENV_KEY.exec(key);
    if (!match || typeof value !== "string") continue;
    const entry = envs.get(match[1]!) ?? { name: "", value: "" };
    envs.set(match[1]!, match[2] === "Name" ? { ...entry, name: value } : { ...entry, value });
  }
  const isPublic = fields.Private !== "true";
  await streamed(res, "---- Setting environment variables ----\n", async () => {
    const variables = [...envs.values()].map(({ name, value }) => ({ name, value, public: isPublic }));
    if (variables.length === 0) throw badRequest("No variables given: send Envs.0.Name and Envs.0.Value.");
    await setEnv(context, actor, app, variables);
    return variables.map((variable) => `${variable.name}\n`);
  });
};
