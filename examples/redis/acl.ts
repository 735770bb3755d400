/**
 * Redis ACL users: one per binding (app, unit or job), plus one per shared instance for the
 * status check. Names are derived from the instance and the binding, so the same binding always
 * maps to the same user, and every user of an instance starts with its user prefix (key-space.ts).
 */
import { createHash, randomBytes } from "node:crypto";
import type { BindingKind } from "provider-kit";
import { ErrorReply } from "@redis/client";
import { redisClient, type Address, type RedisClient } from "@provider-kit/redis-store/connection";
import { aclPasswordHash } from "@provider-kit/platform/redis-server";
import { userPrefix } from "./key-space.js";

/** Passwords are URL-safe, so they go into REDIS_URL as they are. */
export function generatePassword(): string {
  return randomBytes(24).toString("base64url");
}

/**
 * `<user prefix><kind>.<key>`: `cache.app.web`, `osb@<id>:app.h…`. Keys with characters unsafe in
 * a user name or a URL (unit hosts such as `10.0.0.7:8080`, OSB binding keys) are replaced by a
 * stable hash.
 */
export function bindingUserName(instance: string, kind: BindingKind, key: string): string {
  const safeKey = /^[A-Za-z0-9_-]+$/.test(key) ? key : `h${createHash("sha256").update(key).digest("hex").slice(0, 16)}`;
  return `${userPrefix(instance)}${kind}.${safeKey}`;
}

export function healthUserName(instance: string): string {
  return `${userPrefix(instance)}health`;
}

/**
 * Creates the user or resets it completely, then applies `rules` (ACL SETUSER rules: key and
 * channel patterns, commands). The old passwords stop working at once. Resolves once the user is
 * in the ACL file on disk.
 */
export async function setUser(admin: RedisClient, name: string, password: string, rules: readonly string[]): Promise<void> {
  await setUserHashes(admin, name, [aclPasswordHash(password)], rules);
}

/** As `setUser`, with every password the user accepts given by its SHA-256 hash, oldest first. */
export async function setUserHashes(admin: RedisClient, name: string, passwordHashes: readonly string[], rules: readonly string[]) {
  await savedAfter(admin, admin.aclSetUser(name, ["reset", "on", ...passwordHashes.map((hash) => `#${hash}`), ...rules]));
}

/** How a plan gives a user exactly these passwords (SHA-256 hashes, oldest first) with its rules. */
type SetPasswords = (passwordHashes: readonly string[]) => Promise<void>;

/**
 * The password hashes a user accepts, oldest first: Redis keeps them in the order they were added,
 * in ACL GETUSER, in the ACL file and through `setUserHashes`. None when there is no such user.
 */
async function passwordHashesOf(admin: RedisClient, name: string): Promise<string[]> {
  return (await admin.aclGetUser(name))?.passwords ?? [];
}

/**
 * A rotation's first half: the user accepts `password` as well as the ones it had, so apps still
 * holding an older one keep working (and connected) until `keepNewestPassword`.
 */
export async function addPassword(admin: RedisClient, name: string, password: string, set: SetPasswords): Promise<void> {
  await set([...(await passwordHashesOf(admin, name)), aclPasswordHash(password)]);
}

/**
 * A rotation's second half: the user keeps only its newest password, and its connections are
 * closed (Redis cannot tell which password a connection logged in with, and one opened with a
 * retired password must not stay open); clients reconnect with the password they hold. Resolves
 * with how many passwords were retired: 0, and nothing closed, when the user has only one.
 */
export async function keepNewestPassword(admin: RedisClient, name: string, set: SetPasswords): Promise<number> {
  const hashes = await passwordHashesOf(admin, name);
  if (hashes.length <= 1) return 0;
  await set(hashes.slice(-1));
  await admin.sendCommand(["CLIENT", "KILL", "USER", name]);
  return hashes.length - 1;
}

/**
 * Gives existing users new rules in place of their old ones, keeping their passwords: their apps
 * stay connected, and every command they send from now on is checked against the new rules.
 */
export async function replaceRules(admin: RedisClient, users: ReadonlyArray<readonly [name: string, rules: readonly string[]]>) {
  if (users.length === 0) return;
  const changes = users.map(([name, rules]) => admin.aclSetUser(name, ["resetkeys", "resetchannels", "nocommands", ...rules]));
  await savedAfter(admin, Promise.all(changes));
}

/** Removes one user; Redis also closes the connections it has open. */
export async function deleteUser(admin: RedisClient, name: string): Promise<void> {
  await savedAfter(admin, admin.aclDelUser(name));
}

/**
 * A user no one can log in as (off, no password, no command) whose name records a fact about the
 * users beside it in the ACL file; it replaces the `stale` markers.
 */
export async function setMarker(admin: RedisClient, name: string, stale: readonly string[]): Promise<void> {
  const others = stale.filter((user) => user !== name);
  await savedAfter(admin, Promise.all([admin.aclSetUser(name, ["reset"]), others.length > 0 && admin.aclDelUser([...others])]));
}

const aclFileConfigured = new WeakMap<RedisClient, Promise<boolean>>();

/** true when the server saves ACL users to a file (otherwise they live until it restarts). */
export function hasAclFile(admin: RedisClient): Promise<boolean> {
  let known = aclFileConfigured.get(admin);
  if (known === undefined) {
    known = admin.configGet("aclfile").then((config) => Boolean(config.aclfile));
    known.catch(() => aclFileConfigured.delete(admin)); // asked again next time
    aclFileConfigured.set(admin, known);
  }
  return known;
}

/**
 * Resolves once `change` succeeded and an ACL SAVE that Redis ran after it has written the ACL
 * file. ACL SAVE rewrites the whole file, so its cost grows with the number of users: one save at
 * a time runs per server, and every change made while it runs is saved by the next one, together.
 * Each change is still acknowledged only after a save that started after it, so nothing a caller
 * was told is saved can be lost when the server restarts. The save is sent right behind the
 * change on the same connection, so Redis runs them in that order.
 */
async function savedAfter(admin: RedisClient, change: Promise<unknown>): Promise<void> {
  const saved = hasAclFile(admin).then((yes) => (yes ? saverOf(admin)() : undefined));
  await Promise.all([change, saved]);
}

const savers = new WeakMap<RedisClient, () => Promise<void>>();

function saverOf(admin: RedisClient): () => Promise<void> {
  let saver = savers.get(admin);
  if (saver === undefined) {
    saver = oneRunAtATime(async () => void (await admin.aclSave()));
    savers.set(admin, saver);
  }
  return saver;
}

/**
 * `work` run at most once at a time. A call made while it runs is served by the next run, which
 * starts once the current one has ended and serves every call made until it starts.
 */
export function oneRunAtATime(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  let next: Promise<void> | undefined;
  const start = () => {
    const run = work().finally(() => {
      if (running === run) running = undefined;
    });
    running = run;
    return run;
  };
  return () => {
    if (next) return next;
    if (!running) return start();
    const after = running.then(
      () => {},
      () => {},
    );
    next = after.then(() => {
      next = undefined;
      return start();
    });
    return next;
  };
}

/** Tells whether a server accepts a user's password, as it would an app's connection. */
export interface CredentialChecker {
  /** true: the user exists, is on, and has this password; rejects when the server does not answer. */
  accepts(user: string, password: string): Promise<boolean>;
  close(): void;
}

/** How long a check waits for its connection to come back (after the server restarted) before failing. */
const RECONNECT_WAIT_MS = 1_000;

/**
 * AUTH as the user, on a connection of its own kept open for this alone: far cheaper for Redis
 * than ACL GETUSER. AUTH back as the administrator follows in the same write, so the connection
 * is never left logged in as a user that ACL DELUSER would disconnect.
 */
export async function credentialChecker(address: Address): Promise<CredentialChecker> {
  const client = redisClient(address, { reconnect: true });
  await client.connect();
  const administrator = ["AUTH", address.username ?? "default", address.password];
  const reconnected = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off("ready", done);
        resolve();
      };
      const timer = setTimeout(done, RECONNECT_WAIT_MS);
      client.on("ready", done);
    });
  return {
    async accepts(user, password) {
      if (!client.isReady) await reconnected();
      const tried = client.sendCommand(["AUTH", user, password]);
      const back = client.sendCommand(administrator);
      const [accepted] = await Promise.all([
        tried.then(
          () => true,
          (error: unknown) => {
            if (error instanceof ErrorReply && error.message.startsWith("WRONGPASS")) return false;
            throw error;
          },
        ),
        back,
      ]);
      return accepted;
    },
    close: () => client.destroy(),
  };
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
