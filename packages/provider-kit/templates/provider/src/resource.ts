/**
 * The resource this provider manages: a stand-in "database server" kept in memory, so the
 * project works the moment it is generated. Replace it with calls to the real thing (a database
 * server, a message broker, a cloud API); the handlers in handlers.ts stay the same shape.
 *
 * Each instance is one database; each bound app or job gets its own user and password, so
 * unbinding one app never cuts off another.
 */
import { randomBytes } from "node:crypto";

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

export class InMemoryDatabases {
  readonly #databases = new Map<string, Database>();

  /** Where apps connect; a real resource would return its own address. */
  readonly host = "db.example.internal";

  has(name: string): boolean {
    return this.#databases.has(name);
  }

  /** Creates the database; creating one that exists keeps it (the platform may retry a create). */
  create(name: string, plan: string): void {
    if (!this.#databases.has(name)) {
      this.#databases.set(name, { plan, users: new Map(), allowedHosts: new Set() });
    }
  }

  changePlan(name: string, plan: string): void {
    this.#get(name).plan = plan;
  }

  drop(name: string): void {
    this.#databases.delete(name);
  }

  /** The user's credentials, made on first use: binding the same app twice returns the same ones. */
  ensureUser(name: string, user: string): Credentials {
    const users = this.#get(name).users;
    let password = users.get(user);
    if (password === undefined) {
      password = randomBytes(18).toString("base64url");
      users.set(user, password);
    }
    return { user, password };
  }

  /** Removing a user that is already gone is fine: the platform may send an unbind twice. */
  dropUser(name: string, user: string): void {
    this.#get(name).users.delete(user);
  }

  allowHost(name: string, host: string): void {
    this.#get(name).allowedHosts.add(host);
  }

  denyHost(name: string, host: string): void {
    this.#get(name).allowedHosts.delete(host);
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
