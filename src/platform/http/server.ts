/**
 * The local platform's whole HTTP surface: the middleware order and the route table. Each
 * resource's routes live in their own file next to this one; the rules in src/platform/domain.
 */
import express, { type Express, type RequestHandler } from "express";
import { consoleAsset } from "../console/assets.js";
import type { Context } from "../domain/context.js";
import { appCreate, appList, appLog, appRemove, appRestart, appShow, envReveal, envSet, envShow, envUnset, unitsAdd, unitsRemove } from "./apps.js";
import { authentication } from "./auth.js";
import { errorAnswer, notFound } from "./errors.js";
import { handle, type Route } from "./handler.js";
import { instanceBind, instanceCreate, instanceGrant, instanceList, instanceRemove, instanceRevoke, instanceShow, instanceStatusShow, instanceUnbind } from "./instances.js";
import { healthcheck, info } from "./meta.js";
import { providerCallList } from "./provider-calls.js";
import { runRoute } from "./run.js";
import { docShow, docUpdate, providerShow, serviceCreate, serviceGrant, serviceList, serviceRemove, serviceRevoke, serviceShow, serviceUpdate } from "./services.js";
import { memberAdd, memberRemove, teamCreate, teamList, teamRemove, teamShow } from "./teams.js";
import { logIn, logOut, signUp, userInfo } from "./users.js";

export interface ServerOptions {
  version: string;
  /** Serve `run` (off when listening beyond loopback without --allow-run). */
  runAllowed: boolean;
  /** Where failures of the platform itself are reported (the terminal). */
  report: (error: unknown) => void;
  /** Largest accepted request body. Default 1 MiB. */
  bodyLimitBytes?: number;
}

type Method = "get" | "post" | "put" | "delete";
/** How the body is read: JSON or form fields, or plain text (YAML, docs, commands, counts). */
type BodyKind = "fields" | "text" | "none";

interface RouteEntry {
  method: Method;
  path: string;
  route: Route;
  auth: boolean;
  body: BodyKind;
}

const r = (method: Method, path: string, route: Route, body: BodyKind = "none", auth = true): RouteEntry => ({ method, path, route, auth, body });

/**
 * Order matters where paths overlap: `/services/instances...` before `/services/:service...`,
 * and `/services/:service/doc` before `/services/:service/:team`.
 */
function routes(options: ServerOptions): RouteEntry[] {
  return [
    // The console: the page at / and its files at /console/<file>; it calls the routes below with a token.
    r("get", "/{console/:asset}", consoleAsset, "none", false),
    r("get", "/healthcheck", healthcheck, "none", false),
    r("get", "/info", info(options.version), "none", false),

    r("post", "/users", signUp, "fields", false),
    r("post", "/users/:email/tokens", logIn, "fields", false),
    r("delete", "/users/tokens", logOut),
    r("get", "/users/info", userInfo),

    r("get", "/teams", teamList),
    r("post", "/teams", teamCreate, "fields"),
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

    r("get", "/services", serviceList),
    r("post", "/services", serviceCreate, "text"),
    r("put", "/services", serviceUpdate, "text"),
    r("get", "/services/:service", serviceShow),
    r("delete", "/services/:service", serviceRemove),
    r("get", "/services/:service/doc", docShow),
    r("get", "/services/:service/provider", providerShow),
    r("put", "/services/:service/doc", docUpdate, "text"),
    r("put", "/services/:service/:team", serviceGrant),
    r("delete", "/services/:service/:team", serviceRevoke),

    r("get", "/apps", appList),
    r("post", "/apps", appCreate, "fields"),
    r("get", "/apps/:app", appShow),
    r("delete", "/apps/:app", appRemove),
    r("get", "/apps/:app/restart", appRestart),
    r("get", "/apps/:app/log", appLog),
    r("get", "/apps/:app/env", envShow),
    r("get", "/apps/:app/env/:name", envReveal),
    r("post", "/apps/:app/env", envSet, "fields"),
    r("delete", "/apps/:app/env", envUnset, "fields"),
    r("put", "/apps/:app/units", unitsAdd, "text"),
    r("delete", "/apps/:app/units", unitsRemove, "text"),
    r("post", "/apps/:app/run", runRoute(options.runAllowed), "text"),

    r("get", "/provider-calls", providerCallList),
  ];
}

export function createPlatformApp(context: Context, options: ServerOptions): Express {
  const limit = options.bodyLimitBytes ?? 1 << 20;
  const parsers: Record<BodyKind, RequestHandler[]> = {
    fields: [express.json({ limit, strict: false }), express.urlencoded({ limit, extended: false })],
    text: [express.text({ limit, type: () => true })],
    none: [],
  };
  const auth = authentication(context);

  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  for (const entry of routes(options)) {
    // Auth first: a stranger's body is never read.
    app[entry.method](entry.path, ...(entry.auth ? [auth] : []), ...parsers[entry.body], handle(context, entry.route));
  }
  app.use(notFound);
  app.use(errorAnswer(limit, options.report));
  return app;
}
