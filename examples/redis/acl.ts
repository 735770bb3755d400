/**
 * Redis ACL users: one per binding (app, unit or job), plus one per shared instance for the
 * status check. Names are derived from the instance and the binding, so the same binding always
 * maps to the same user, and every user of an instance starts with `<instance>.`.
 */
import { createHash, randomBytes } from "node:crypto";
import type { BindingKind } from "../../src/index.js";
import type { RedisClient } from "../../src/redis/connection.js";

/** Passwords are URL-safe, so they go into REDIS_URL as they are. */
export function generatePassword(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * `<instance>.<kind>.<key>`. Instance names cannot contain `.`, so the prefix `<instance>.`
 * belongs to one instance only. Keys with characters unsafe in a user name or a URL
 * (unit hosts such as `10.0.0.7:8080`) are replaced by a stable hash.
 */
export function bindingUserName(instance: string, kind: BindingKind, key: string): string {
  const safeKey = /^[A-Za-z0-9_-]+$/.test(key) ? key : `h${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
  return `${instance}.${kind}.${safeKey}`;
}

export function healthUserName(instance: string): string {
  return `${instance}.health`;
}

/**
 * Creates the user or resets it completely, then applies `rules` (ACL SETUSER rules: key and
 * channel patterns, commands). The old password stops working at once.
 */
export async function setUser(admin: RedisClient, name: string, password: string, rules: readonly string[]): Promise<void> {
  await admin.aclSetUser(name, ["reset", "on", `>${password}`, ...rules]);
  await persistUsers(admin);
}

/**
 * Gives existing users new rules in place of their old ones, keeping their passwords: their apps
 * stay connected, and every command they send from now on is checked against the new rules.
 */
export async function replaceRules(admin: RedisClient, users: ReadonlyArray<readonly [name: string, rules: readonly string[]]>) {
  if (users.length === 0) return;
  for (const [name, rules] of users) await admin.aclSetUser(name, ["resetkeys", "resetchannels", "nocommands", ...rules]);
  await persistUsers(admin);
}

/** Removes one user; Redis also closes the connections it has open. */
export async function deleteUser(admin: RedisClient, name: string): Promise<void> {
  await admin.aclDelUser(name);
  await persistUsers(admin);
}

/** Removes every user of an instance. */
export async function deleteInstanceUsers(admin: RedisClient, instance: string): Promise<void> {
  const users = (await admin.aclUsers()).filter((user) => user.startsWith(`${instance}.`));
  if (users.length === 0) return;
  await admin.aclDelUser(users);
  await persistUsers(admin);
}

const aclFileConfigured = new WeakMap<RedisClient, boolean>();

/** true when the server saves ACL users to a file (otherwise they live until it restarts). */
export async function hasAclFile(admin: RedisClient): Promise<boolean> {
  let known = aclFileConfigured.get(admin);
  if (known === undefined) {
    const config = await admin.configGet("aclfile");
    known = Boolean(config.aclfile);
    aclFileConfigured.set(admin, known);
  }
  return known;
}

async function persistUsers(admin: RedisClient): Promise<void> {
  if (await hasAclFile(admin)) await admin.aclSave();
}

/** The environment a bound app receives. Every value is a string, as the platform requires. */
export function connectionEnv(options: {
  host: string;
  port: number;
  user: string;
  password: string;
}): Record<string, string> {
  const { host, port, user, password } = options;
  return {
    REDIS_HOST: host,
    REDIS_PORT: String(port),
    REDIS_USER: user,
    REDIS_PASSWORD: password,
    REDIS_URL: `redis://${encodeURIComponent(user)}:${encodeURIComponent(password)}@${host}:${port}`,
  };
}
