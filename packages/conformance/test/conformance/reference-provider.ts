/**
 * A provider written directly with Express 5 (no provider-kit server code): the reference
 * the kit must pass, and, with one fault switched on, the broken providers it must catch.
 * Each fault replaces one piece of the reference (a route or the auth rule), so the broken
 * providers share every other line with the reference.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response } from "express";

type Handler = (req: Request, res: Response) => void;

interface Instance {
  /** Date.now() from which the instance is ready (async provisioning). */
  readyAt: number;
  /** Bound apps and the password each got: its own, the same again on a rebind. */
  apps: Map<string, string>;
  units: Set<string>;
  jobs: Set<string>;
}

export interface ReferenceOptions {
  username: string;
  password: string;
  /** How long provisioning takes; 0 provisions synchronously. Default 0. */
  provisionMs?: number;
  /**
   * Provisioning (when provisionMs is not 0) lasts until the first bind refused with 412 (the
   * kit's bind while provisioning), however long the kit takes to send it: a test waits for that
   * call, not for a duration long enough for a busy machine.
   */
  readyAfterRefusedBind?: boolean;
  fault?: Fault;
}

/** The routes a fault can replace, by name. */
type RouteName = "plans" | "create" | "update" | "destroy" | "status" | "info" | "bindApp" | "unbindApp";

/** Splits Basic credentials; the `password-split-all` fault swaps in the classic `split(":")` bug. */
type CredentialsParser = (decoded: string) => [string, string];

const PLANS = [
  { name: "small", description: "One small thing" },
  { name: "large", description: "A large thing" },
];

/** The app a bind or unbind is for: its name, or (Variant B) its hostname. */
function appOf(req: Request): string | undefined {
  return field(req, "app-name", "appName") ?? field(req, "hostname", "hostname") ?? (req.params.host ? String(req.params.host) : undefined);
}

class Reference {
  readonly instances = new Map<string, Instance>();
  constructor(readonly options: ReferenceOptions) {}

  /** When an instance created now is ready (never by itself while it waits for a refused bind). */
  provisionedAt(): number {
    const provisionMs = this.options.provisionMs ?? 0;
    if (provisionMs > 0 && this.options.readyAfterRefusedBind) return Number.POSITIVE_INFINITY;
    return Date.now() + provisionMs;
  }

  /** The key an instance is kept under: its name (the `names-cut-at-10` fault cuts it short). */
  key(name: string): string {
    return (this.options.fault && (FAULTS[this.options.fault] as FaultSwitches).instanceKey?.(name)) ?? name;
  }

  find(req: Request, res: Response): Instance | undefined {
    const instance = this.instances.get(this.key(String(req.params.name)));
    if (!instance) {
      const unknown = this.options.fault && (FAULTS[this.options.fault] as FaultSwitches).unknownInstance;
      if (unknown) unknown(res, String(req.params.name));
      else text(res, 404, "Instance not found.");
    }
    return instance;
  }

  /** The instance, ready for binds, or a 404/412 answer (and undefined). */
  findReady(req: Request, res: Response): Instance | undefined {
    const instance = this.find(req, res);
    if (instance && Date.now() < instance.readyAt) {
      text(res, 412, "Instance is still being provisioned.");
      if (this.options.readyAfterRefusedBind) instance.readyAt = Date.now();
      return undefined;
    }
    return instance;
  }

  /** The bind result of `app` on `instance`: its own password, kept for a rebind. */
  env(req: Request, instance: Instance, app: string): Record<string, string> {
    const password = instance.apps.get(app) ?? randomBytes(9).toString("base64url");
    instance.apps.set(app, password);
    return { REF_URL: `ref://${String(req.params.name)}`, REF_USER: app, REF_PASSWORD: password };
  }

  readonly routes: Record<RouteName, Handler> = {
    plans: (_req, res) => {
      res.json(PLANS);
    },
    create: (req, res) => {
      const name = field(req, "name", "name");
      if (!name) return text(res, 400, "Missing the instance name.");
      if (this.instances.has(this.key(name))) return text(res, 409, "An instance with this name already exists.");
      const plan = field(req, "plan", "plan");
      if (plan && !PLANS.some((known) => known.name === plan)) return text(res, 400, `Unknown plan "${plan}": choose small or large.`);
      this.instances.set(this.key(name), {
        readyAt: this.provisionedAt(),
        apps: new Map(),
        units: new Set(),
        jobs: new Set(),
      });
      res.status(201).end();
    },
    destroy: (req, res) => {
      if (this.find(req, res)) {
        this.instances.delete(this.key(String(req.params.name)));
        res.status(200).end();
      }
    },
    update: (req, res) => {
      if (this.find(req, res)) res.status(200).end();
    },
    status: (req, res) => {
      const instance = this.find(req, res);
      if (instance) res.status(Date.now() < instance.readyAt ? 202 : 204).end();
    },
    info: (req, res) => {
      if (this.find(req, res)) res.json([{ label: "Size", value: "small" }]);
    },
    bindApp: (req, res) => {
      const instance = this.findReady(req, res);
      if (!instance) return;
      const app = appOf(req);
      if (!app) return text(res, 400, "Missing app-name.");
      res.status(201).json(this.env(req, instance, app));
    },
    unbindApp: (req, res) => {
      const instance = this.find(req, res);
      if (!instance) return;
      instance.apps.delete(appOf(req) ?? "");
      res.status(200).end();
    },
  };
}

/** A database user named after the app's address (app-host), created on bind: a second bind fails, the user exists. */
function hostKeyedUserBind(ref: Reference): Handler {
  return (req, res) => {
    const instance = ref.findReady(req, res);
    if (!instance) return;
    const user = `u_${appHostOf(req).replace(/[^a-z0-9]/gi, "_")}`;
    if (instance.apps.has(user)) return text(res, 500, `role "${user}" already exists`);
    instance.apps.set(user, randomBytes(9).toString("base64url"));
    res.status(201).json({ REF_USER: user, REF_PASSWORD: instance.apps.get(user) });
  };
}

/** One deliberate contract violation each. */
const FAULTS = {
  "update-405": { routes: { update: () => (_req, res) => text(res, 405, "Method Not Allowed") } },
  "numeric-env": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.findReady(req, res);
        if (instance) res.status(201).json({ ...ref.env(req, instance, appOf(req) ?? ""), REF_PORT: 6379 });
      },
    },
  },
  "empty-bind-body": {
    routes: {
      bindApp: (ref) => (req, res) => {
        if (ref.findReady(req, res)) res.status(201).end();
      },
    },
  },
  "bind-unknown-instance-200": {
    routes: {
      bindApp: (ref) => (req, res) => {
        if (!ref.instances.has(String(req.params.name))) return void res.status(200).json({});
        ref.routes.bindApp(req, res);
      },
    },
  },
  "no-auth": { auth: false },
  "password-split-all": { parseCredentials: (decoded: string) => decoded.split(":") as [string, string] },
  "info-redirect": { routes: { info: () => (req, res) => res.redirect(302, `/resources/${String(req.params.name)}/info`) } },
  "status-200-empty": {
    routes: {
      status: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (instance) res.status(Date.now() < instance.readyAt ? 202 : 200).end();
      },
    },
  },
  // The progress of the work sent as JSON: the platform's users cannot read it.
  "status-pending-json": {
    routes: {
      status: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        if (Date.now() < instance.readyAt) res.status(202).json({ progress: 40 });
        else res.status(204).end();
      },
    },
  },
    "create-500": { routes: { create: () => (_req, res) => text(res, 500, "Could not create the instance: out of capacity.") } },
  "duplicate-500": {
    routes: {
      create: (ref) => (req, res) => {
        if (ref.instances.has(field(req, "name", "name") ?? "")) return text(res, 500, "Internal error.");
        ref.routes.create(req, res);
      },
    },
  },
  "destroy-500": {
    routes: {
      destroy: (ref) => (req, res) => {
        if (ref.find(req, res)) text(res, 500, "Could not remove the instance: its disk is busy.");
      },
    },
  },
  "plans-text": { routes: { plans: () => (_req, res) => text(res, 200, "small: One small thing") } },
  "unbind-gone-404": {
    routes: {
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        if (!instance.apps.delete(appOf(req) ?? "")) return text(res, 404, "App is not bound.");
        res.status(200).end();
      },
    },
  },
  "bind-while-provisioning": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        // Bound while pending: provisioning goes on for provisionMs from here, not forever.
        if (instance.readyAt === Number.POSITIVE_INFINITY) instance.readyAt = Date.now() + (ref.options.provisionMs ?? 0);
        res.status(201).json(ref.env(req, instance, appOf(req) ?? ""));
      },
    },
  },
  // Issue 14's providers: what the kit used to misjudge, and the faults it used to miss.
  "unbind-without-lookup": { routes: { unbindApp: () => (_req, res) => void res.status(200).end() } },
  "info-405": { routes: { info: () => (_req, res) => text(res, 405, "Method Not Allowed") } },
  // A status probe looking at the wrong port: every status call fails.
  "status-500": { routes: { status: () => (_req, res) => text(res, 500, "Could not reach the resource's status port.") } },
  // Flask's default page for an unhandled exception, on a duplicate create.
  "duplicate-crash-page": {
    routes: {
      create: (ref) => (req, res) => {
        if (ref.instances.has(field(req, "name", "name") ?? "")) return void res.status(500).type("text/html").send(CRASH_PAGE);
        ref.routes.create(req, res);
      },
    },
  },
  "unknown-plan-crash-page": {
    routes: {
      create: (ref) => (req, res) => {
        const plan = field(req, "plan", "plan");
        if (plan && !PLANS.some((known) => known.name === plan)) return void res.status(500).type("text/html").send(CRASH_PAGE);
        ref.routes.create(req, res);
      },
    },
  },
  "unknown-plan-accepted": {
    routes: {
      create: (ref) => (req, res) => {
        const { plan: _ignored, ...rest } = (req.body ?? {}) as Record<string, unknown>;
        req.body = rest;
        ref.routes.create(req, res);
      },
    },
  },
  // Flask's habit: plain-text error messages served as text/html.
  "errors-typed-html": { errorType: "text/html; charset=utf-8" },
  // Default 404 pages: every unknown instance and route answers an HTML page.
  "not-found-pages": {
    errorBody: (status: number, message: string) =>
      status === 404 ? `<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n<p>${message}</p>\n` : undefined,
  },
  // Plans, bind results and info sent as text/html (JSON bodies all the same).
  "json-as-html": { jsonType: "text/html; charset=utf-8" },
  // A bind of an app already bound fails instead of answering its credentials again.
  "rebind-409": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.findReady(req, res);
        if (!instance) return;
        if (instance.apps.has(appOf(req) ?? "")) return text(res, 409, "This app is already bound.");
        ref.routes.bindApp(req, res);
      },
    },
  },
  // Every app on every instance gets the same password.
  "shared-credentials": {
    routes: {
      bindApp: (ref) => (req, res) => {
        if (ref.findReady(req, res)) res.status(201).json({ REF_URL: "ref://shared", REF_PASSWORD: SHARED_PASSWORD });
      },
    },
  },
  // Every app on every instance gets the same host and port, and no credentials at all.
  "no-credentials": {
    routes: {
      bindApp: (ref) => (req, res) => {
        if (ref.findReady(req, res)) res.status(201).json({ REF_HOST: "10.0.0.5", REF_PORT: "6379" });
      },
    },
  },
  // Issue 23's providers. Flask answers 405 on a path it serves for other methods: the Postgres
  // provider has no update, no info, and its plans are elsewhere.
  "flask-405s": {
    routes: {
      plans: () => (_req, res) => text(res, 405, "Method Not Allowed"),
      update: () => (_req, res) => text(res, 405, "Method Not Allowed"),
      info: () => (_req, res) => text(res, 405, "Method Not Allowed"),
    },
  },
  // Issue 32: a status route that looks instances up elsewhere than the create put them.
  "status-lookup-404": { routes: { status: () => (req, res) => text(res, 404, `Instance ${String(req.params.name)} not found`) } },
  // Issue 32: no plans route (Flask's 405), and a create that takes any plan, since there are none.
  "no-plans-405": {
    routes: {
      plans: () => (_req, res) => text(res, 405, "Method Not Allowed"),
      create: (ref) => (req, res) => {
        const { plan: _ignored, ...rest } = (req.body ?? {}) as Record<string, unknown>;
        req.body = rest;
        ref.routes.create(req, res);
      },
    },
  },
  // A status probe on the wrong port for the instance, and a crash page for an unknown one: two faults.
  "status-crash-unknown": {
    routes: {
      status: (ref) => (req, res) => {
        if (!ref.instances.has(String(req.params.name))) return void res.status(500).type("text/html").send(CRASH_PAGE);
        text(res, 500, "Could not reach the resource's status port.");
      },
    },
  },
  // The Postgres provider's way: the user and its password derived from the instance and the
  // app's address (app-host), the user dropped by address on unbind. Fine until two apps swap addresses.
  "host-keyed-credentials": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.findReady(req, res);
        if (!instance) return;
        const host = appHostOf(req);
        instance.apps.set(host, derivedPassword(String(req.params.name), host));
        res.status(201).json({ REF_USER: `u_${host.slice(0, 10)}`, REF_PASSWORD: instance.apps.get(host) });
      },
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        instance.apps.delete(appHostOf(req));
        res.status(200).end();
      },
    },
  },
  // Issue 32's PostgreSQL provider: a database user named after the app's address (app-host),
  // created on bind (a second bind fails: the user exists) and dropped by address on unbind.
  "host-keyed-rebind-500": {
    routes: {
      bindApp: hostKeyedUserBind,
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        instance.apps.delete(`u_${appHostOf(req).replace(/[^a-z0-9]/gi, "_")}`);
        res.status(200).end();
      },
    },
  },
  // Issue 44: the PostgreSQL provider as it is: the same, and an unbind of a user already
  // dropped fails too (DROP ROLE of a role that does not exist).
  "host-keyed-roles": {
    routes: {
      bindApp: hostKeyedUserBind,
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        const user = `u_${appHostOf(req).replace(/[^a-z0-9]/gi, "_")}`;
        if (!instance.apps.delete(user)) return text(res, 500, `role "${user}" does not exist`);
        res.status(200).end();
      },
    },
  },
  // Issue 32's MySQL provider: one database user per instance, shared by every app bound to it,
  // and dropped by any app's unbind; dropping it again fails.
  "shared-user-dropped": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.findReady(req, res);
        if (!instance) return;
        const password = instance.apps.get("user") ?? randomBytes(9).toString("base64url");
        instance.apps.set("user", password);
        res.status(201).json({ REF_USER: "instance_user", REF_PASSWORD: password });
      },
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        if (!instance.apps.delete("user")) return text(res, 500, "Operation DROP USER failed for 'instance_user'@'%'");
        res.status(200).end();
      },
    },
  },
  // An unbind that revokes nothing: binding the app again gives the same password back.
  "unbind-keeps-credentials": {
    routes: {
      unbindApp: (ref) => (req, res) => {
        if (ref.find(req, res)) res.status(200).end();
      },
    },
  },
  // Issue 32's Django provider: `user, password = decoded.split(":")` raises on a password with a
  // colon, and debug mode answers a page whose frame locals hold the header and the API password.
  "debug-page-on-colons": {
    parseCredentials: (decoded: string) => {
      const parts = decoded.split(":");
      if (parts.length !== 2) throw new Error(`ValueError: too many values to unpack (expected 2, got ${parts.length})`);
      return parts as [string, string];
    },
    debugPage: true,
  },
  // Names cut to 10 characters (as the Postgres provider does for its roles): two fresh names clash.
  "names-cut-at-10": { instanceKey: (name: string) => name.slice(0, 10) },
  // No lookup of the instance: an unknown one raises, on every route.
  "unknown-instance-500": {
    unknownInstance: (res: Response, name: string) => text(res, 500, `Internal error: KeyError: '${name}'`),
  },
} satisfies Record<string, FaultSwitches>;

/** What a fault changes: routes, the auth rule, or how answers are typed and worded. */
interface FaultSwitches {
  routes?: Partial<Record<RouteName, (ref: Reference) => Handler>>;
  auth?: false;
  parseCredentials?: CredentialsParser;
  /** Content-Type of the plain-text error answers. */
  errorType?: string;
  /** An HTML page as the body of error answers, instead of the message alone (undefined: the message). */
  errorBody?: (status: number, message: string) => string | undefined;
  /** Content-Type of the JSON answers. */
  jsonType?: string;
  /** The key an instance is kept under, from its name. */
  instanceKey?: (name: string) => string;
  /** The answer for an instance that does not exist, instead of 404. */
  unknownInstance?: (res: Response, name: string) => void;
  /** An exception answers a framework's debug page, frame locals included, instead of a message. */
  debugPage?: true;
}

/** The value every binding gets from the `shared-credentials` provider: it must never reach a report. */
export const SHARED_PASSWORD = "same-for-everyone-1234";

const CRASH_PAGE = `<!doctype html>
<html lang=en>
<title>500 Internal Server Error</title>
<h1>Internal Server Error</h1>
<p>The server encountered an internal error and was unable to complete your request. Either the server is overloaded or there is an error in the application.</p>
`;

/** Django's technical 500 page, cut down: the frame's local variables (HTML-escaped), then the exception. */
function debugPage(error: Error, req: Request, options: ReferenceOptions): string {
  const escape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll("'", "&#x27;");
  const locals = { auth_header: req.headers.authorization ?? "", API_USERNAME: options.username, API_PASSWORD: options.password };
  const rows = Object.entries(locals).map(([name, value]) => `<tr><td>${name}</td><td class="code"><pre>&#x27;${escape(value)}&#x27;</pre></td></tr>`);
  return `<!DOCTYPE html>\n<html lang="en">\n<body>\n<h1>ValueError at ${escape(req.path)}</h1>\n<table class="vars">${rows.join("")}</table>\n<pre class="exception_value">${escape(error.message)}</pre>\n</body>\n</html>\n`;
}

export type Fault = keyof typeof FAULTS;

export function referenceProvider(options: ReferenceOptions): Express {
  const reference = new Reference(options);
  const fault: FaultSwitches = options.fault ? FAULTS[options.fault] : {};
  const route = (name: RouteName): Handler => fault.routes?.[name]?.(reference) ?? reference.routes[name];

  const app = express();
  app.use((_req: Request, res: Response, next: NextFunction) => {
    res.locals.fault = fault;
    // res.json keeps a Content-Type already set.
    if (fault.jsonType) res.type(fault.jsonType);
    next();
  });
  if (fault.auth !== false) app.use(basicAuth(options, fault.parseCredentials ?? splitOnFirstColon));
  app.use(express.urlencoded({ extended: false }), express.json());

  app.get("/resources/plans", route("plans"));
  app.post("/resources", route("create"));
  app.put("/resources/:name", route("update"));
  app.delete("/resources/:name", route("destroy"));
  app.get("/resources/:name/status", route("status"));
  app.get("/resources/:name", route("info"));
  app.post("/resources/:name/bind-app", route("bindApp"));
  app.delete("/resources/:name/bind-app", route("unbindApp"));
  // Variant B: bind by hostname.
  app.post("/resources/:name", route("bindApp"));
  app.delete("/resources/:name/hostname/:host", route("unbindApp"));
  app.post("/resources/:name/bind", (req, res) => {
    const instance = reference.findReady(req, res);
    if (!instance) return;
    instance.units.add(field(req, "unit-host", "unitHost") ?? "");
    res.status(201).json({ REF_URL: `ref://${String(req.params.name)}` });
  });
  app.delete("/resources/:name/bind", (req, res) => {
    reference.find(req, res)?.units.delete(field(req, "unit-host", "unitHost") ?? "");
    if (!res.headersSent) res.status(200).end();
  });
  app.put("/resources/:name/binds/jobs/:job", (req, res) => {
    const instance = reference.findReady(req, res);
    if (!instance) return;
    instance.jobs.add(String(req.params.job));
    res.status(201).json({ REF_URL: `ref://${String(req.params.name)}` });
  });
  app.delete("/resources/:name/binds/jobs/:job", (req, res) => {
    reference.find(req, res)?.jobs.delete(String(req.params.job));
    if (!res.headersSent) res.status(200).end();
  });

  app.use((_req: Request, res: Response) => text(res, 404, "No such route."));
  app.use((error: Error, req: Request, res: Response, _next: NextFunction) => {
    if (fault.debugPage) return void res.status(500).type("text/html").send(debugPage(error, req, options));
    text(res, 500, `Failed: ${error.message}`);
  });
  return app;
}

function splitOnFirstColon(decoded: string): [string, string] {
  const colon = decoded.indexOf(":");
  return colon < 0 ? [decoded, ""] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

function basicAuth(options: ReferenceOptions, parse: CredentialsParser) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? "";
    const [user, password] = header.startsWith("Basic ") ? parse(Buffer.from(header.slice(6), "base64").toString("utf8")) : ["", ""];
    if (user === options.username && sameSecret(password ?? "", options.password)) return next();
    res.setHeader("WWW-Authenticate", 'Basic realm="reference"');
    text(res, 401, "Unauthorized.");
  };
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The app's address: `app-host` (form), else the first of `app-hosts`/`appHosts`. */
function appHostOf(req: Request): string {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const hosts = body["app-hosts"] ?? body.appHosts;
  return field(req, "app-host", "appHost") ?? String((Array.isArray(hosts) ? hosts[0] : hosts) ?? "");
}

/** The same password for the same instance and address, every time. */
function derivedPassword(instance: string, host: string): string {
  return createHmac("sha256", "reference-salt").update(instance).update("\0").update(host).digest("base64url").slice(0, 16);
}

/** A form field (form encoding) or its camelCase JSON name (JSON encoding). */
function field(req: Request, formName: string, jsonName: string): string | undefined {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const value = body[formName] ?? body[jsonName];
  return typeof value === "string" ? value : undefined;
}

function text(res: Response, status: number, message: string): void {
  const fault = (status >= 400 ? res.locals.fault : undefined) as FaultSwitches | undefined;
  const page = fault?.errorBody?.(status, message);
  if (page) return void res.status(status).type("text/html").send(page);
  res.status(status).type(fault?.errorType ?? "text/plain").send(message);
}

export interface Listening {
  url: string;
  close(): Promise<void>;
}

/** Listen on a free loopback port. */
export function listen(app: Express): Promise<Listening> {
  return new Promise((resolve, reject) => {
    const server = app.listen(0, "127.0.0.1", (error?: Error) => {
      if (error) return reject(error);
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () =>
          new Promise<void>((done, fail) => {
            server.closeAllConnections();
            server.close((closeError) => (closeError ? fail(closeError) : done()));
          }),
      });
    });
  });
}
