/**
 * Users and login tokens. Passwords are kept as scrypt hashes, tokens as sha256 hashes: the store
 * never holds a secret that works.
 */
import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";
import { ADMIN_TEAM, type Actor, type Context } from "./context.js";
import { badRequest, conflict, unauthorized } from "./errors.js";
import { EMAIL, EMAIL_MAX_LENGTH, PASSWORD_LENGTH, type User } from "./model.js";

const hashPassword = promisify(scrypt) as (password: string, salt: string, length: number) => Promise<Buffer>;
const TOKEN_LIFETIME_MS = 7 * 24 * 3600_000;

export const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

export function checkPassword(password: string): void {
  if (password.length < PASSWORD_LENGTH.min || password.length > PASSWORD_LENGTH.max) {
    throw badRequest(`Password length should be at least ${PASSWORD_LENGTH.min} characters and at most ${PASSWORD_LENGTH.max} characters.`);
  }
}

export async function createUser(context: Context, email: string, password: string): Promise<User> {
  if (email.length > EMAIL_MAX_LENGTH) throw badRequest(`Invalid email: at most ${EMAIL_MAX_LENGTH} characters.`);
  if (!EMAIL.test(email)) throw badRequest("Invalid email.");
  checkPassword(password);
  if (await context.store.get("users", email)) throw conflict("This email is already registered.");
  const user: User = { email, ...(await passwordFields(password)) };
  await context.store.put("users", email, user);
  return user;
}

/** The stored form of a password: a fresh salt and the scrypt hash. */
export async function passwordFields(password: string): Promise<Pick<User, "salt" | "passwordHash">> {
  const salt = randomBytes(16).toString("hex");
  return { salt, passwordHash: (await hashPassword(password, salt, 32)).toString("hex") };
}

export async function passwordMatches(user: User, password: string): Promise<boolean> {
  const given = await hashPassword(password, user.salt, 32);
  return timingSafeEqual(given, Buffer.from(user.passwordHash, "hex"));
}

/** Stands in for an unknown user, so that a login for one takes as long as a wrong password. */
const NOBODY: User = { email: "", salt: "00", passwordHash: "00".repeat(32) };

/** `{token}`; the token is random hex and expires after 7 days, as the platform's. */
export async function login(context: Context, email: string, password: string, address: string): Promise<string> {
  if (password === "") throw badRequest("You must provide a password to login.");
  const { accounts, addresses } = context.logins;
  // The account is throttled per address: a guesser elsewhere cannot hold its owner up.
  const account = `${email} from ${address}`;
  const releaseAccount = await accounts.take(account);
  let matches: boolean;
  let user: User | undefined;
  try {
    const releaseAddress = await addresses.take(address);
    try {
      user = await context.store.get("users", email);
      // An unknown user costs the same hash and gets the same answer as a wrong password.
      matches = await passwordMatches(user ?? NOBODY, password);
    } finally {
      releaseAddress();
    }
  } finally {
    releaseAccount();
  }
  if (!user || !matches) {
    accounts.failed(account);
    addresses.failed(address);
    throw unauthorized("Authentication failed: wrong e-mail or password.");
  }
  accounts.succeeded(account); // not the address: a guesser's own login must not reset it
  const token = randomBytes(32).toString("hex");
  await context.store.put("tokens", sha256(token), { hash: sha256(token), email, expiresAt: Date.now() + TOKEN_LIFETIME_MS });
  return token;
}

export async function logout(context: Context, token: string): Promise<void> {
  await context.store.delete("tokens", sha256(token));
}

/** Who a bearer credential speaks for: a user (login token or API key) or one app (app token). */
export type Credential = { user: User } | { app: string };

/** undefined when the credential is unknown or expired. */
export async function credentialOf(context: Context, token: string): Promise<Credential | undefined> {
  const hash = sha256(token);
  const stored = await context.store.get("tokens", hash);
  if (stored && stored.expiresAt <= Date.now()) await context.store.delete("tokens", hash);
  const email = stored && stored.expiresAt > Date.now() ? stored.email : (await context.store.get("apiKeys", hash))?.email;
  if (email !== undefined) {
    const user = await context.store.get("users", email);
    return user ? { user } : undefined;
  }
  const appToken = await context.store.get("appTokens", hash);
  return appToken ? { app: appToken.app } : undefined;
}

export async function actorOf(context: Context, email: string): Promise<Actor> {
  const teams = (await context.store.all("teams")).filter((team) => team.users.includes(email)).map((team) => team.name);
  return { email, teams: teams.sort(), admin: teams.includes(ADMIN_TEAM) };
}

/** Ends every login of the user: a new password shuts out whoever had the old one. The API key stays (POST /users/api-key replaces it). */
export async function revokeLogins(context: Context, email: string): Promise<void> {
  const tokens = (await context.store.all("tokens")).filter((token) => token.email === email);
  await Promise.all(tokens.map((token) => context.store.delete("tokens", token.hash)));
}

/**
 * Creates the admin user and the `admin` team on first start; later starts leave them as they
 * are. An account of that email that someone else registered first (it is not in `admin`) is
 * taken over: the given password replaces its owner's, and its logins and API key stop working.
 */
export async function ensureAdmin(context: Context, email: string, password: string): Promise<void> {
  const existing = await context.store.get("users", email);
  const team = await context.store.get("teams", ADMIN_TEAM);
  if (!existing) await createUser(context, email, password);
  else if (!team?.users.includes(email)) {
    await context.store.put("users", email, { ...existing, ...(await passwordFields(password)), apiKeyHash: undefined });
    if (existing.apiKeyHash) await context.store.delete("apiKeys", existing.apiKeyHash);
    await revokeLogins(context, email);
    context.say(
      `PLATFORM_ADMIN_EMAIL names the existing user ${email}, who was not an admin: the account was taken over ` +
        "with PLATFORM_ADMIN_PASSWORD, and its logins and API key no longer work.",
    );
  }
  if (!team) await context.store.put("teams", ADMIN_TEAM, { name: ADMIN_TEAM, users: [email] });
  else if (!team.users.includes(email)) await context.store.put("teams", ADMIN_TEAM, { ...team, users: [...team.users, email] });
}
