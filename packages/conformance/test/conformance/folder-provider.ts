/**
 * A provider that keeps real state, as tsuru/postgres-api does: a folder per instance (its
 * database) and a file per database user in a folder shared by every instance (Postgres roles
 * belong to the cluster, not to a database, so dropping a database leaves them). A user is named
 * after the instance and the app's address (app-host), made on bind and dropped on unbind; a
 * second bind and the unbind of a user already dropped fail, as CREATE ROLE and DROP ROLE do.
 * With `leakOnFailedUnbind`, a failed unbind leaves its connection to the database open (a file
 * in the database's folder), and a database with a connection open cannot be dropped.
 */
import { createHmac, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import express, { type Express, type Request, type Response } from "express";

export interface FolderProviderOptions {
  username: string;
  password: string;
  /** Where the databases and users live: `databases/<instance>/` and `users/<user>`. */
  root: string;
  leakOnFailedUnbind?: boolean;
}

export function folderProvider({ username, password, root, leakOnFailedUnbind = false }: FolderProviderOptions): Express {
  const databases = path.join(root, "databases");
  const users = path.join(root, "users");
  mkdirSync(databases, { recursive: true });
  mkdirSync(users, { recursive: true });
  const database = (req: Request) => path.join(databases, String(req.params.name));
  const userOf = (req: Request) => `u_${createHmac("sha256", "salt").update(String(req.params.name)).update("\0").update(appHost(req)).digest("hex").slice(0, 12)}`;
  const fail = (res: Response, status: number, message: string) => void res.status(status).type("text/plain").send(message);

  const app = express();
  app.use((req, res, next) => {
    const expected = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    if (req.headers.authorization === expected) return next();
    fail(res, 401, "Send the service's credentials.");
  });
  app.use(express.urlencoded({ extended: false }));
  app.get("/resources/plans", (_req, res) => void res.json([{ name: "shared", description: "A database on the shared cluster" }]));
  app.post("/resources", (req, res) => {
    const { name, plan } = req.body as Record<string, string | undefined>;
    if (!name) return fail(res, 400, "Parameter `name` is missing.");
    if (plan && plan !== "shared") return fail(res, 400, `Unknown plan "${plan}": the only plan is shared.`);
    const folder = path.join(databases, name);
    if (existsSync(folder)) return fail(res, 409, `Database ${name} already exists.`);
    mkdirSync(path.join(folder, "connections"), { recursive: true });
    res.status(201).end();
  });
  app.get("/resources/:name/status", (req, res) => (existsSync(database(req)) ? void res.status(204).end() : fail(res, 404, "No such database.")));
  app.post("/resources/:name/bind-app", (req, res) => {
    if (!existsSync(database(req))) return fail(res, 404, "No such database.");
    const user = userOf(req);
    if (existsSync(path.join(users, user))) return fail(res, 500, `role "${user}" already exists`);
    writeFileSync(path.join(users, user), String(req.params.name));
    res.status(201).json({ PG_USER: user, PG_PASSWORD: createHmac("sha256", "password").update(user).digest("hex") });
  });
  app.delete("/resources/:name/bind-app", (req, res) => {
    if (!existsSync(database(req))) return fail(res, 404, "No such database.");
    const user = userOf(req);
    if (!existsSync(path.join(users, user))) {
      if (leakOnFailedUnbind) writeFileSync(path.join(database(req), "connections", randomUUID()), "");
      return fail(res, 500, `role "${user}" does not exist`);
    }
    rmSync(path.join(users, user));
    res.status(200).end();
  });
  app.delete("/resources/:name", (req, res) => {
    if (!existsSync(database(req))) return fail(res, 404, "No such database.");
    if (readdirSync(path.join(database(req), "connections")).length > 0) {
      return fail(res, 500, `database "${String(req.params.name)}" is being accessed by other users`);
    }
    rmSync(database(req), { recursive: true });
    res.status(200).end();
  });
  app.use((_req, res) => fail(res, 404, "Not supported."));
  return app;
}

/** What is in the provider's folders: the databases and the users, by name. */
export function folderState(root: string): { databases: string[]; users: string[] } {
  return { databases: readdirSync(path.join(root, "databases")).sort(), users: readdirSync(path.join(root, "users")).sort() };
}

/** Closes the connections a failed unbind left open: what an operator does before dropping a database by hand. */
export function closeConnections(root: string, instance: string): void {
  const connections = path.join(root, "databases", instance, "connections");
  for (const connection of readdirSync(connections)) rmSync(path.join(connections, connection));
}

function appHost(req: Request): string {
  const host = (req.body as Record<string, unknown>)["app-host"];
  return typeof host === "string" ? host : "";
}
