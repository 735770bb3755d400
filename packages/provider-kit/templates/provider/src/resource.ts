/**
 * The resource this provider manages: a stand-in "database server" kept in memory (and in a
 * file when given one, so that it outlives a restart as a real server does), so the project
 * works the moment it is generated. Replace it with calls to the real thing (a database
 * server, a message broker, a cloud API); the handlers in handlers.ts stay the same shape.
 *
 * Each instance is one database; each bound app or job gets its own user and password, so
 * unbinding one app never cuts off another.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

export interface Credentials {
  user: string;
  password: string;
}

interface Database {
  plan: string;
  /** User name → password. */
  users: Map<string, string>;
  /** Unit addresses allowed to connect (what a real server would put in its firewall). */
  allowedHosts: Set<string>;
}

/** The file's content: each database, its users and hosts as JSON can hold them. */
type Saved = Record<string, { plan: string; users: Record<string, string>; allowedHosts: string[] }>;

export class InMemoryDatabases {
  readonly #databases = new Map<string, Database>();
  readonly #file: string | undefined;

  /** `file`: where the databases are also kept, read at start and written at each change (it holds passwords). */
  constructor(file?: string) {
    this.#file = file;
    if (file === undefined || !existsSync(file)) return;
    const saved = JSON.parse(readFileSync(file, "utf8")) as Saved;
    for (const [name, database] of Object.entries(saved)) {
      this.#databases.set(name, { plan: database.plan, users: new Map(Object.entries(database.users)), allowedHosts: new Set(database.allowedHosts) });
    }
  }

  #save(): void {
    if (this.#file === undefined) return;
    const saved: Saved = {};
    for (const [name, database] of this.#databases) {
      saved[name] = { plan: database.plan, users: Object.fromEntries(database.users), allowedHosts: [...database.allowedHosts] };
    }
    mkdirSync(path.dirname(this.#file), { recursive: true });
    writeFileSync(this.#file, JSON.stringify(saved), { mode: 0o600 });
  }

  /** Where apps connect; a real resource would return its own address. */
  readonly host = "db.example.internal";

  has(name: string): boolean {
    return this.#databases.has(name);
  }

  /** Creates the database; creating one that exists keeps it (the platform may retry a create). */
  create(name: string, plan: string): void {
    if (!this.#databases.has(name)) {
      this.#databases.set(name, { plan, users: new Map(), allowedHosts: new Set() });
      this.#save();
    }
  }

  changePlan(name: string, plan: string): void {
    this.#get(name).plan = plan;
    this.#save();
  }

  drop(name: string): void {
    this.#databases.delete(name);
    this.#save();
  }

  /** The user's credentials, made on first use: binding the same app twice returns the same ones. */
  ensureUser(name: string, user: string): Credentials {
    const users = this.#get(name).users;
    let password = users.get(user);
    if (password === undefined) {
      password = randomBytes(18).toString("base64url");
      users.set(user, password);
      this.#save();
    }
    return { user, password };
  }

  /** Removing a user that is already gone is fine: the platform may send an unbind twice. */
  dropUser(name: string, user: string): void {
    this.#get(name).users.delete(user);
    this.#save();
  }

  allowHost(name: string, host: string): void {
    this.#get(name).allowedHosts.add(host);
    this.#save();
  }

  denyHost(name: string, host: string): void {
    this.#get(name).allowedHosts.delete(host);
    this.#save();
  }

  /** What `info` shows: the plan and how many users and hosts the database has. */
  describe(name: string): { plan: string; users: number; allowedHosts: number } {
    const database = this.#get(name);
    return { plan: database.plan, users: database.users.size, allowedHosts: database.allowedHosts.size };
  }

  /** Callers check `has` first (handlers.ts answers 404 for a missing instance). */
  #get(name: string): Database {
    const database = this.#databases.get(name);
    if (database === undefined) throw new Error(`No database for instance ${name}.`);
    return database;
  }
}
