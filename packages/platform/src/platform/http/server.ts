/**
 * The local platform's whole HTTP surface: the middleware order and the route table. Each
 * resource's routes live in their own file next to this one; the rules in src/platform/domain.
 * Two tables over the same operations: the spec's routes, and the few routes today's `tsuru`
 * client needs beyond them (tsuru-client.ts). Every route is also served under the client's
 * version prefixes; a client route is served unprefixed too unless the spec has that path.
 */
import express, { type Express, type RequestHandler } from "express";
import { consoleAsset } from "../console/assets.js";
import type { Context } from "../domain/context.js";
import { appCreate, appList, appLog, appRemove, appRestart, appShow, appSwap, envReveal, envSet, envShow, envUnset, poolChange, unitsAdd, unitsRemove } from "./apps.js";
import { tokenAuthentication } from "./auth.js";
import { deployCreate, deployList, deployShow } from "./deploys.js";
import { apiErrorAnswer, unknownRoute } from "./errors.js";
import { handle, type Route } from "./handler.js";
import { healerList, healerRun } from "./healers.js";
import { hostGuard, type HostGuardOptions } from "./host-guard.js";
import { instanceBind, instanceCreate, instanceGrant, instanceList, instanceRemove, instanceRevoke, instanceShow, instanceStatusShow, instanceUnbind } from "./instances.js";
import { healthReport, info } from "./meta.js";
import { platformList } from "./platforms.js";
import { brokerAdd, brokerList, brokerRemove, brokerUpdate } from "./brokers.js";
import { poolList } from "./pools.js";
import { providerCallClear, providerCallList } from "./provider-calls.js";
import { authenticatedProxy, instanceProxy, instanceProxyV2, serviceProxy } from "./proxy.js";
import { quotaShow } from "./quota.js";
import { runRoute } from "./run.js";
import { actionGrant, actionGrantList, actionRevoke, manifestShow, manifestUpdate } from "./service-actions.js";
import { docShow, docUpdate, planList, providerShow, serviceCreate, serviceGrant, serviceList, serviceRemove, serviceRevoke, serviceShow, serviceUpdate } from "./services.js";
import { memberAdd, memberRemove, teamCreate, teamList, teamRemove, teamShow } from "./teams.js";
import { appTokenCreate } from "./tokens.js";
import {
  authSchemes,
  bindStream,
  envSetStream,
  instanceCreateForm,
  instanceInfoClient,
  instanceRemoveClient,
  instanceStatusClient,
  instanceUpdateClient,
  serviceCreateForm,
  swapDeprecated,
  unbindStream,
} from "./tsuru-client.js";
import { apiKeyRegenerate, apiKeyShow, keyAdd, keyList, keyRemove, logIn, logOut, passwordChange, passwordReset, signUp, userInfo, userRemove } from "./users.js";

export interface ServerOptions {
  version: string;
  /** Serve `run` (--allow-run), to the members of the app's teams. */
  runAllowed: boolean;
  /** Anyone may sign up (--open-signup); otherwise only the admin creates users. */
  openSignup: boolean;
  /** The host names answered for, and the origins whose pages may change state. */
  hosts: HostGuardOptions;
  /** Where failures of the platform itself are reported (the terminal). */
  report: (error: unknown) => void;
  /** Largest accepted request body. Default 1 MiB. */
  bodyLimitBytes?: number;
}

type Method = "get" | "post" | "put" | "patch" | "delete";
/**
 * How the body is read: JSON or form fields, plain text (YAML, docs, commands, counts), or the
 * bytes as sent (the proxy forwards them).
 */
type BodyKind = "fields" | "text" | "raw" | "none";

interface ApiRoute {
  method: Method;
  path: string;
  route: Route;
  auth: boolean;
  body: BodyKind;
}

const r = (method: Method, path: string, route: Route, body: BodyKind = "none", auth = true): ApiRoute => ({ method, path, route, auth, body });

/** A proxy route answers the methods the platform's router gives it (AddAll); GET answers HEAD too. */
const proxy = (path: string, route: Route): ApiRoute[] =>
  (["get", "post", "put", "patch", "delete"] as const).map((method) => r(method, path, route, "raw"));

/**
 * Order matters where paths overlap: `/services/instances...` before `/services/:service...`,
 * and `/services/:service/doc` before `/services/:service/:team`.
 */
function routes(options: ServerOptions): ApiRoute[] {
  return [
    // The console: the page at / and its files at /console/<file>; it calls the routes below with a token.
    r("get", "/{console/:asset}", consoleAsset, "none", false),
    r("get", "/healthcheck", healthReport, "none", false),
    r("get", "/info", info(options.version), "none", false),

    r("post", "/users", signUp(options.openSignup, 200), "fields", false),
    r("delete", "/users", userRemove),
    r("post", "/users/:email/tokens", logIn, "fields", false),
    r("post", "/users/:email/password", passwordReset, "none", false),
    r("delete", "/users/tokens", logOut),
    r("get", "/users/info", userInfo),
    r("put", "/users/password", passwordChange, "fields"),
    r("get", "/users/keys", keyList),
    r("post", "/users/keys", keyAdd, "fields"),
    r("delete", "/users/keys", keyRemove, "fields"),
    r("get", "/users/api-key", apiKeyShow),
    r("post", "/users/api-key", apiKeyRegenerate),
    r("get", "/quota/:user", quotaShow),
    r("post", "/tokens", appTokenCreate, "fields"),

    r("get", "/teams", teamList),
    r("post", "/teams", teamCreate(200), "fields"),
    r("get", "/teams/:team", teamShow),
    r("delete", "/teams/:team", teamRemove),
    r("put", "/teams/:team/:user", memberAdd),
    r("delete", "/teams/:team/:user", memberRemove),

    r("get", "/services/instances", instanceList),
    r("post", "/services/instances", instanceCreate, "fields"),
    r("put", "/services/instances/permission/:instance/:team", instanceGrant),
    r("delete", "/services/instances/permission/:instance/:team", instanceRevoke),
    r("get", "/services/instances/:instance/status", instanceStatusShow),
    r("get", "/services/instances/:instance", instanceShow),
    r("delete", "/services/instances/:instance", instanceRemove),
    r("put", "/services/instances/:instance/:app", instanceBind),
    r("delete", "/services/instances/:instance/:app", instanceUnbind),

    // The proxy, before `/services/:service/...`: `/services/proxy/service/x` is no service "proxy".
    ...proxy("/services/proxy/service/:service", serviceProxy),
    ...proxy("/services/:service/proxy/:instance", instanceProxy),

    r("get", "/services", serviceList),
    r("post", "/services", serviceCreate, "text"),
    r("put", "/services", serviceUpdate, "text"),
    r("get", "/services/:service", serviceShow),
    r("delete", "/services/:service", serviceRemove),
    r("get", "/services/:service/doc", docShow),
    r("get", "/services/:service/provider", providerShow),
    r("get", "/services/:service/plans", planList),
    r("put", "/services/:service/doc", docUpdate, "text"),
    r("put", "/services/:service/:team", serviceGrant),
    r("delete", "/services/:service/:team", serviceRevoke),

    r("get", "/apps", appList),
    r("post", "/apps", appCreate(200), "fields"),
    r("get", "/apps/:app", appShow),
    r("delete", "/apps/:app", appRemove),
    r("get", "/apps/:app/restart", appRestart),
    r("get", "/apps/:app/log", appLog),
    r("get", "/apps/:app/logs", appLog),
    r("get", "/apps/:app/env", envShow),
    r("get", "/apps/:app/env/:name", envReveal),
    r("post", "/apps/:app/env", envSet, "fields"),
    r("delete", "/apps/:app/env", envUnset, "fields"),
    r("put", "/apps/:app/units", unitsAdd, "text"),
    r("delete", "/apps/:app/units", unitsRemove, "text"),
    r("post", "/apps/:app/run", runRoute(options.runAllowed), "text"),
    r("post", "/apps/:app/pool", poolChange, "text"),
    r("post", "/apps/:app/deploy", deployCreate, "fields"),
    r("put", "/swap", appSwap),
    r("get", "/pools", poolList),
    r("get", "/platforms", platformList),

    r("get", "/deploys", deployList),
    r("get", "/deploys/:deploy", deployShow),
    r("get", "/healers", healerList),
    r("get", "/healers/:healer", healerRun),

    // Open Service Brokers (api/service_broker.go): admins only.
    r("get", "/brokers", brokerList),
    r("post", "/brokers", brokerAdd, "fields"),
    r("put", "/brokers/:broker", brokerUpdate, "fields"),
    r("delete", "/brokers/:broker", brokerRemove),

    r("get", "/provider-calls", providerCallList),
    r("delete", "/provider-calls", providerCallClear),
  ];
}

/**
 * Today's client (`tsuru` 1.34): its paths, encodings and statuses where they are not the spec's,
 * as today's platform (api/server.go) serves them.
 */
const clientRoutes = (options: ServerOptions): ApiRoute[] => [
  r("get", "/auth/schemes", authSchemes, "none", false),
  // createUser, createTeam and createApp answer 201.
  r("post", "/users", signUp(options.openSignup, 201), "fields", false),
  r("post", "/teams", teamCreate(201), "fields"),
  r("post", "/apps", appCreate(201), "fields"),
  r("post", "/services", serviceCreateForm, "fields"),
  r("post", "/services/:service/instances", instanceCreateForm, "fields"),
  r("get", "/services/:service/instances/:instance", instanceInfoClient),
  r("put", "/services/:service/instances/:instance", instanceUpdateClient, "fields"),
  r("delete", "/services/:service/instances/:instance", instanceRemoveClient),
  r("get", "/services/:service/instances/:instance/status", instanceStatusClient),
  r("put", "/services/:service/instances/:instance/apps/:app", bindStream, "fields"),
  r("delete", "/services/:service/instances/:instance/apps/:app", unbindStream, "fields"),
  // The 1.0 form of the same routes, which today's platform still serves next to the 1.13 one.
  r("put", "/services/:service/instances/:instance/:app", bindStream, "fields"),
  r("delete", "/services/:service/instances/:instance/:app", unbindStream, "fields"),
  r("post", "/apps/:app/env", envSetStream, "fields"),
  r("post", "/swap", swapDeprecated),
];

const VERSION_PREFIXES = ["/1.0", "/1.13", "/1.18"];

/**
 * Routes of later API versions, served under their own version only (the platform's router
 * serves them unprefixed too; here `PUT /services/<s>/manifest` would be the spec's team grant).
 */
const VERSIONED_ROUTES: ApiRoute[] = [
  ...proxy("/1.20/services/:service/resources/:instance{/*path}", instanceProxyV2),
  ...proxy("/1.21/services/:service/authenticated-resources{/*path}", authenticatedProxy),
  r("put", "/1.31/services/:service/manifest", manifestUpdate, "fields"),
  r("get", "/1.31/services/:service/manifest", manifestShow),
  r("get", "/1.31/services/:service/actions", actionGrantList),
  r("put", "/1.31/services/:service/actions/:action/:team", actionGrant),
  r("delete", "/1.31/services/:service/actions/:action/:team", actionRevoke),
];

/** Every path a route answers on: client routes first, so they win under the prefixes. */
function mountedRoutes(options: ServerOptions): ApiRoute[] {
  const spec = routes(options);
  const prefixed = (entry: ApiRoute) => VERSION_PREFIXES.map((prefix) => ({ ...entry, path: `${prefix}${entry.path}` }));
  const inSpec = (entry: ApiRoute) => spec.some((known) => known.method === entry.method && known.path === entry.path);
  return [
    ...clientRoutes(options).flatMap((entry) => [...prefixed(entry), ...(inSpec(entry) ? [] : [entry])]),
    ...spec,
    ...spec.flatMap(prefixed),
    ...VERSIONED_ROUTES,
  ];
}

export function createPlatformApp(context: Context, options: ServerOptions): Express {
  const limit = options.bodyLimitBytes ?? 1 << 20;
  const parsers: Record<BodyKind, RequestHandler[]> = {
    fields: [express.json({ limit, strict: false }), express.urlencoded({ limit, extended: false })],
    text: [express.text({ limit, type: () => true })],
    raw: [express.raw({ limit, type: () => true })],
    none: [],
  };
  const auth = tokenAuthentication(context);

  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use(hostGuard(options.hosts));
  for (const entry of mountedRoutes(options)) {
    // Auth first: a stranger's body is never read.
    app[entry.method](entry.path, ...(entry.auth ? [auth] : []), ...parsers[entry.body], handle(context, entry.route));
  }
  app.use(unknownRoute);
  app.use(apiErrorAnswer(limit, options.report));
  return app;
}
