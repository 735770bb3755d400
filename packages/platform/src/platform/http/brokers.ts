/**
 * `/brokers`: Open Service Brokers, admins only (api/service_broker.go). The body is the real
 * platform's Broker: `{Name, URL, Config: {AuthConfig: {BasicAuthConfig: {Username, Password}} |
 * {BearerConfig: {Token}}, Insecure, Context, CacheExpirationSeconds}}`, as JSON or as form fields
 * with dotted names (`Config.AuthConfig.BasicAuthConfig.Username`); like Go's decoder, the field
 * names match whatever their case.
 */
import { z } from "zod";
import { addBroker, listBrokers, removeBroker, updateBroker } from "../domain/brokers.js";
import { badRequest } from "../domain/errors.js";
import type { Broker } from "../domain/model.js";
import { sendEmpty, sendJson, type Route } from "./handler.js";

const text = z.string().optional();
const BROKER = z.object({
  name: text,
  url: text,
  config: z
    .object({
      authconfig: z
        .object({
          basicauthconfig: z.object({ username: z.string(), password: z.string() }).optional(),
          bearerconfig: z.object({ token: z.string() }).optional(),
        })
        .optional(),
      insecure: z.union([z.boolean(), z.enum(["true", "false"])]).optional(),
      context: z.record(z.string(), z.unknown()).optional(),
      cacheexpirationseconds: z.coerce.number().int().optional(),
    })
    .optional(),
});

/** The body with dotted form keys made nested and every key lower-cased (Go's json and form decoders match names that way). */
function normalised(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalised);
  if (value === null || typeof value !== "object") return value;
  const nested: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const path = key.split(".").map((part) => part.toLowerCase());
    let at = nested;
    for (const part of path.slice(0, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    // The broker's own context keeps its keys as given.
    at[path.at(-1)!] = path.at(-1) === "context" ? item : normalised(item);
  }
  return nested;
}

function brokerOf(body: unknown, name?: string): Broker {
  const parsed = BROKER.safeParse(normalised(body ?? {}));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    // decodeServiceBroker's words.
    throw badRequest(`unable to parse broker: ${issue.path.join(".")}: ${issue.message}`);
  }
  const { config = {} } = parsed.data;
  const auth = config.authconfig;
  return {
    name: name ?? parsed.data.name ?? "",
    url: parsed.data.url ?? "",
    config: {
      ...(auth?.basicauthconfig ? { authConfig: { basicAuthConfig: auth.basicauthconfig } } : {}),
      ...(auth?.bearerconfig && !auth.basicauthconfig ? { authConfig: { bearerConfig: auth.bearerconfig } } : {}),
      ...(config.insecure === undefined ? {} : { insecure: config.insecure === true || config.insecure === "true" }),
      ...(config.context ? { context: config.context } : {}),
      ...(config.cacheexpirationseconds === undefined ? {} : { cacheExpirationSeconds: config.cacheexpirationseconds }),
    },
  };
}

/** The broker as the real platform's API shows it (Go's field names). */
function view(broker: Broker) {
  const auth = broker.config.authConfig;
  return {
    Name: broker.name,
    URL: broker.url,
    Config: {
      AuthConfig: auth
        ? {
            BasicAuthConfig: auth.basicAuthConfig ? { Username: auth.basicAuthConfig.username, Password: auth.basicAuthConfig.password } : null,
            BearerConfig: auth.bearerConfig ? { Token: auth.bearerConfig.token } : null,
          }
        : null,
      Insecure: broker.config.insecure ?? false,
      Context: broker.config.context ?? null,
      CacheExpirationSeconds: broker.config.cacheExpirationSeconds ?? 0,
    },
  };
}

/** serviceBrokerList: 204 when there is none. */
export const brokerList: Route = async ({ res, context, actor }) => {
  const brokers = await listBrokers(context, actor);
  if (brokers.length === 0) return sendEmpty(res, 204);
  sendJson(res, 200, { brokers: brokers.map(view) });
};

/** serviceBrokerAdd: 201. */
export const brokerAdd: Route = async ({ req, res, context, actor }) => {
  await addBroker(context, actor, brokerOf(req.body));
  sendEmpty(res, 201);
};

/** serviceBrokerUpdate: the broker named in the path takes the body's URL and config. */
export const brokerUpdate: Route = async ({ req, res, context, actor }) => {
  const name = String(req.params.broker ?? "");
  await updateBroker(context, actor, name, brokerOf(req.body, name));
  sendEmpty(res, 200);
};

/** serviceBrokerDelete. */
export const brokerRemove: Route = async ({ req, res, context, actor }) => {
  await removeBroker(context, actor, String(req.params.broker ?? ""));
  sendEmpty(res, 200);
};
