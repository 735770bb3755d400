/**
 * A provider written directly with Express 5 (no provider-kit server code): the reference
 * the kit must pass, and, with one fault switched on, the broken providers it must catch.
 * Each fault replaces one piece of the reference (a route or the auth rule), so the broken
 * providers share every other line with the reference.
 */
import { timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import express, { type Express, type NextFunction, type Request, type Response } from "express";

type Handler = (req: Request, res: Response) => void;

interface Instance {
  /** Date.now() from which the instance is ready (async provisioning). */
  readyAt: number;
  apps: Set<string>;
  units: Set<string>;
  jobs: Set<string>;
}

export interface ReferenceOptions {
  username: string;
  password: string;
  /** How long provisioning takes; 0 provisions synchronously. Default 0. */
  provisionMs?: number;
  fault?: Fault;
}

/** The routes a fault can replace, by name. */
type RouteName = "plans" | "create" | "update" | "destroy" | "status" | "info" | "bindApp" | "unbindApp";

/** Splits Basic credentials; the `password-split-all` fault swaps in the classic `split(":")` bug. */
type CredentialsParser = (decoded: string) => [string, string];

class Reference {
  readonly instances = new Map<string, Instance>();
  constructor(readonly options: ReferenceOptions) {}

  /** The instance named in the path, or a 404 answer (and undefined). */
  find(req: Request, res: Response): Instance | undefined {
    const instance = this.instances.get(String(req.params.name));
    if (!instance) text(res, 404, "Instance not found.");
    return instance;
  }

  /** The instance, ready for binds, or a 404/412 answer (and undefined). */
  findReady(req: Request, res: Response): Instance | undefined {
    const instance = this.find(req, res);
    if (instance && Date.now() < instance.readyAt) {
      text(res, 412, "Instance is still being provisioned.");
      return undefined;
    }
    return instance;
  }

  env(req: Request): Record<string, string> {
    return { REF_URL: `ref://${String(req.params.name)}`, REF_USER: field(req, "app-name", "appName") ?? "" };
  }

  readonly routes: Record<RouteName, Handler> = {
    plans: (_req, res) => {
      res.json([{ name: "small", description: "One small thing" }, { name: "large", description: "A large thing" }]);
    },
    create: (req, res) => {
      const name = field(req, "name", "name");
      if (!name) return text(res, 400, "Missing the instance name.");
      if (this.instances.has(name)) return text(res, 409, "An instance with this name already exists.");
      this.instances.set(name, {
        readyAt: Date.now() + (this.options.provisionMs ?? 0),
        apps: new Set(),
        units: new Set(),
        jobs: new Set(),
      });
      res.status(201).end();
    },
    destroy: (req, res) => {
      if (this.find(req, res)) {
        this.instances.delete(String(req.params.name));
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
      const app = field(req, "app-name", "appName") ?? field(req, "hostname", "hostname");
      if (!app) return text(res, 400, "Missing app-name.");
      instance.apps.add(app);
      res.status(201).json(this.env(req));
    },
    unbindApp: (req, res) => {
      const instance = this.find(req, res);
      if (!instance) return;
      instance.apps.delete(field(req, "app-name", "appName") ?? String(req.params.host));
      res.status(200).end();
    },
  };
}

/** One deliberate contract violation each. */
export const FAULTS = {
  "update-405": { routes: { update: () => (_req, res) => text(res, 405, "Method Not Allowed") } },
  "numeric-env": {
    routes: {
      bindApp: (ref) => (req, res) => {
        if (ref.findReady(req, res)) res.status(201).json({ ...ref.env(req), REF_PORT: 6379 });
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
  "bind-creates-unknown-instance": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const name = String(req.params.name);
        if (!ref.instances.has(name)) ref.instances.set(name, { readyAt: 0, apps: new Set(), units: new Set(), jobs: new Set() });
        ref.routes.bindApp(req, res);
      },
    },
  },
  "plans-text": { routes: { plans: () => (_req, res) => text(res, 200, "small: One small thing") } },
  "unbind-gone-404": {
    routes: {
      unbindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (!instance) return;
        if (!instance.apps.delete(field(req, "app-name", "appName") ?? "")) return text(res, 404, "App is not bound.");
        res.status(200).end();
      },
    },
  },
  "bind-while-provisioning": {
    routes: {
      bindApp: (ref) => (req, res) => {
        const instance = ref.find(req, res);
        if (instance) res.status(201).json(ref.env(req));
      },
    },
  },
} satisfies Record<
  string,
  { routes?: Partial<Record<RouteName, (ref: Reference) => Handler>>; auth?: false; parseCredentials?: CredentialsParser }
>;

export type Fault = keyof typeof FAULTS;

export function referenceProvider(options: ReferenceOptions): Express {
  const reference = new Reference(options);
  const fault: { routes?: Partial<Record<RouteName, (ref: Reference) => Handler>>; auth?: false; parseCredentials?: CredentialsParser } =
    options.fault ? FAULTS[options.fault] : {};
  const route = (name: RouteName): Handler => fault.routes?.[name]?.(reference) ?? reference.routes[name];

  const app = express();
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
    res.status(201).json(reference.env(req));
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
  app.use((error: Error, _req: Request, res: Response, _next: NextFunction) => text(res, 500, `Failed: ${error.message}`));
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

/** A form field (form encoding) or its camelCase JSON name (JSON encoding). */
function field(req: Request, formName: string, jsonName: string): string | undefined {
  const body = (req.body ?? {}) as Record<string, unknown>;
  const value = body[formName] ?? body[jsonName];
  return typeof value === "string" ? value : undefined;
}

function text(res: Response, status: number, message: string): void {
  res.status(status).type("text/plain").send(message);
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
