/**
 * The routes only today's command-line client (`tsuru`, 1.34) needs: its paths and encodings
 * (platform-notes.md, last section) over the same domain operations as the spec's routes.
 * Form bodies; bind, unbind, env-set and instance removal answer a stream of newline-separated JSON messages
 * `{"Message": ...}`. As the platform's `errorHandlingMiddleware` answers: a failure before the
 * first message is an HTTP error with its own status (400, 404, 500...), one after it the stream's
 * last line `{"Message": "", "Error": ...}`.
 */
import type { Response } from "express";
import { z } from "zod";
import { appFor } from "../domain/apps.js";
import { bind, bindTargets, unbind, unbindEveryApp } from "../domain/binding.js";
import { heldBackFromProcesses, setEnv } from "../domain/env.js";
import { badRequest, failed, notFound, PlatformError, preconditionFailed } from "../domain/errors.js";
import { assertInstanceAccess, createInstance, findInstance, instanceData, instanceStatus, removeInstance, updateInstance } from "../domain/instances.js";
import type { Instance } from "../domain/model.js";
import type { ParameterTree } from "provider-kit/contract";
import { manifestOf } from "../domain/manifest.js";
import { registerService } from "../domain/services.js";
import { body, flag, nameParam, parseBool, sendEmpty, sendJson, sendText, type Call, type Route } from "./handler.js";

const STREAM_TYPE = "application/x-json-stream";
const FIELD = z.string().max(1000).optional();
const SERVICE_FORM = z.object({ id: z.string().max(100), username: FIELD, password: FIELD, endpoint: FIELD, "multi-cluster": FIELD, team: FIELD, variant: FIELD, encoding: FIELD });
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
 * as the platform's API takes them (the client sends production only); `team`, the owner team.
 * The client sends no variant: a service it registers is called as today's platform calls
 * providers (`current`: no unit binds), unless `variant` asks for A or B.
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
  await registerService(context, actor, manifestOf({ ...fields, endpoint }, "current"));
  sendEmpty(res, 201);
};

/** Form or JSON fields by their name in any case, as the platform's decoder matches `Description`, `description`... */
function fieldsByName(fields: Record<string, unknown>): (name: string) => unknown {
  const byName = new Map(Object.entries(fields).map(([key, value]) => [key.toLowerCase(), value]));
  return (name) => byName.get(name);
}

const texts = (value: unknown): string[] => (Array.isArray(value) ? value : value === undefined ? [] : [value]).filter((item): item is string => typeof item === "string" && item !== "");
const firstText = (value: unknown): string => texts(value)[0] ?? "";

/** `parameters.<a>.<b>=v` form keys, or a JSON `parameters` object of text, as one tree. */
function parametersOf(fields: Record<string, unknown>): ParameterTree {
  const tree: ParameterTree = {};
  const put = (path: string[], value: string) => {
    let node = tree;
    for (const key of path.slice(0, -1)) {
      const next = node[key];
      node = typeof next === "object" ? next : (node[key] = {});
    }
    node[path.at(-1)!] = value;
  };
  const walk = (value: unknown, path: string[]) => {
    if (path.length > 8) throw badRequest(`Invalid field "parameters.${path.join(".")}": nested too deep.`);
    if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") put(path, String(value));
    else if (value !== null && typeof value === "object" && !Array.isArray(value)) for (const [key, item] of Object.entries(value)) walk(item, [...path, key]);
    else if (value !== null && value !== undefined) throw badRequest(`Invalid field "parameters.${path.join(".")}": give text.`);
  };
  for (const [key, value] of Object.entries(fields)) {
    if (key.toLowerCase() === "parameters") walk(value, []);
    else if (key.toLowerCase().startsWith("parameters.")) walk(firstText(value), key.split(".").slice(1));
  }
  return tree;
}

/**
 * `POST /1.0/services/<s>/instances` (service-instance-add): form `name, plan, owner, pool,
 * description, tag*, parameters.*`, read as `createServiceInstance` reads them; the endpoint's
 * `Create` hands description, tags and parameters on to the provider.
 */
export const instanceCreateForm: Route = async ({ req, res, context, actor }) => {
  const fields = body(req, INSTANCE_FORM);
  const field = fieldsByName(body(req, z.record(z.string(), z.unknown())));
  const description = firstText(field("description"));
  const tags = [...texts(field("tags")), ...texts(field("tag"))];
  const parameters = parametersOf(req.body as Record<string, unknown>);
  await createInstance(context, actor, {
    name: fields.name,
    service: nameParam(req, "service", "service"),
    plan: fields.plan || undefined,
    owner: fields.owner || undefined,
    pool: fields.pool || undefined,
    ...(description === "" ? {} : { description }),
    ...(tags.length === 0 ? {} : { tags }),
    ...(Object.keys(parameters).length === 0 ? {} : { parameters }),
  });
  sendEmpty(res, 201);
};

type StreamLine = { Message: string; Error?: string };

/**
 * Runs `work` as a stream: the messages it says as it goes, then those it answers. The stream
 * (200, `first` its opening message) starts with the first of them; a failure before it is
 * thrown, so the client gets the HTTP error, and one after it is the stream's `Error`.
 */
async function streamed(res: Response, first: string | undefined, work: (say: (message: string) => void) => Promise<string[]>): Promise<void> {
  let started = false;
  const write = (line: StreamLine) => res.write(`${JSON.stringify(line)}\n`);
  const start = () => {
    if (started) return;
    started = true;
    res.writeHead(200, { "Content-Type": STREAM_TYPE });
    if (first !== undefined) write({ Message: first });
  };
  const say = (message: string) => {
    start();
    write({ Message: message });
  };
  try {
    for (const message of await work(say)) say(message);
  } catch (error) {
    if (!started) throw error;
    // The platform's own failures keep their details for its terminal, as errorAnswer does.
    const message = error instanceof PlatformError ? error.message : "The platform failed to handle this request: its terminal shows the details.";
    write({ Message: "", Error: message });
  }
  start();
  res.end();
}

async function bindingNames({ req, context, actor }: Call) {
  const service = nameParam(req, "service", "service");
  const instance = nameParam(req, "instance", "instance");
  const app = nameParam(req, "app", "app");
  const targets = await bindTargets(context, actor, instance, app);
  if (targets.instance.service !== service) throw notFound(`Service instance "${instance}" not found in the service "${service}".`);
  return { instance, app, bound: targets.instance.apps.includes(app) };
}

/** `PUT /1.13/services/<s>/instances/<i>/apps/<a>` and 1.0's `.../<i>/<a>` (bindServiceInstance; form `noRestart`). */
export const bindStream: Route = async (call) => {
  const { instance, app } = await bindingNames(call);
  await streamed(call.res, `---- Binding the instance ${instance} to the app ${app} ----\n`, async () => {
    const names = await bind(call.context, call.actor, instance, app);
    const heldBack = heldBackFromProcesses(names);
    return [
      `---- Setting ${names.length} new environment variables ----\n`,
      ...names.map((name) => `${name}\n`),
      ...(heldBack.length > 0 ? [`---- In TSURU_SERVICES only, not in the app's processes (docs/tools/platform.md): ${heldBack.join(", ")} ----\n`] : []),
      "---- Restarting the app ----\n",
    ];
  });
};

/**
 * `DELETE` on the same paths (unbindServiceInstance; `?force=true`): the failures a forced unbind
 * passed over are among its messages.
 */
export const unbindStream: Route = async (call) => {
  const { instance, app, bound } = await bindingNames(call);
  // UnbindApp's ErrAppNotBound, a plain error: 500 (the spec's route keeps the old platform's 412).
  if (!bound) throw failed("app is not bound to this service instance");
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
  const isPublic = !parseBool(fields.Private);
  await streamed(res, "---- Setting environment variables ----\n", async () => {
    const variables = [...envs.values()].map(({ name, value }) => ({ name, value, public: isPublic }));
    if (variables.length === 0) throw badRequest("No variables given: send Envs.0.Name and Envs.0.Value.");
    await setEnv(context, actor, app, variables);
    return variables.map((variable) => `${variable.name}\n`);
  });
};

/** The instance a client path names (`/services/<s>/instances/<i>`), when it is of that service and the user may see it. */
async function namedInstance({ req, context, actor }: Call): Promise<Instance> {
  const service = nameParam(req, "service", "service");
  const name = nameParam(req, "instance", "instance");
  const instance = await findInstance(context, name);
  if (instance.service !== service) throw notFound(`Service instance "${name}" not found in the service "${service}".`);
  assertInstanceAccess(actor, instance);
  return instance;
}

/** `GET /1.0/services/<s>/instances/<i>` (service-instance-info): the fields of `serviceInstanceInfo`. */
export const instanceInfoClient: Route = async (call) => {
  const instance = await namedInstance(call);
  const data = await instanceData(call.context, call.actor, instance.name);
  sendJson(call.res, 200, {
    Apps: data.apps,
    Jobs: [],
    Teams: data.teams,
    TeamOwner: data.teamowner,
    Description: instance.description ?? "",
    PlanName: data.planname,
    PlanDescription: "",
    Pool: instance.pool ?? "",
    Cluster: "cluster" in data ? data.cluster : "",
    CustomInfo: data.info ?? {},
    Tags: instance.tags ?? [],
    Parameters: instance.parameters ?? {},
  });
};

/** `GET /1.0/services/<s>/instances/<i>/status` (service-instance-status). */
export const instanceStatusClient: Route = async (call) => {
  const instance = await namedInstance(call);
  sendText(call.res, 200, await instanceStatus(call.context, call.actor, instance.name));
};

/**
 * `PUT /1.0/services/<s>/instances/<i>` (service-instance-update): form `description, plan,
 * teamowner, tag*, parameters.*`, the instance's whole new state, as `updateServiceInstance` reads it.
 */
export const instanceUpdateClient: Route = async (call) => {
  const instance = await namedInstance(call);
  const sent = body(call.req, z.record(z.string(), z.unknown()));
  const field = fieldsByName(sent);
  await updateInstance(call.context, call.actor, instance.name, {
    description: firstText(field("description")),
    plan: firstText(field("plan")),
    teamOwner: firstText(field("teamowner")),
    tags: [...texts(field("tags")), ...texts(field("tag"))],
    parameters: parametersOf(sent),
  });
  sendEmpty(call.res, 200);
};

/**
 * `DELETE /1.0/services/<s>/instances/<i>[?unbindall=true&ignoreerrors=true]` (service-instance-remove
 * [-f] [--ignore-errors]): streamed as `removeServiceInstance` streams it, each app unbound said as
 * it happens, so a destroy that fails later still shows what was unbound.
 */
export const instanceRemoveClient: Route = async (call) => {
  const instance = await namedInstance(call);
  const [unbindAll, ignoreErrors] = [flag(call.req, "unbindall"), flag(call.req, "ignoreerrors")];
  await streamed(call.res, undefined, async (say) => {
    if (unbindAll) await unbindEveryApp(call.context, call.actor, instance.name, say);
    await removeInstance(call.context, call.actor, instance.name, { ignoreErrors, say });
    return ["service instance successfully removed\n"];
  });
};

/** `POST /1.0/swap` (app-swap): refused since 2024, as the platform's `swap` does; the spec's `PUT /swap` still swaps. */
export const swapDeprecated: Route = async () => {
  throw preconditionFailed("swapping is deprecated");
};
