/**
 * A user's own account: password reset (the token goes to the platform's terminal: there is no
 * mail), password change, removal, public keys and the API key.
 */
import { randomBytes } from "node:crypto";
import type { Actor, Context } from "./context.js";
import { badRequest, conflict, forbidden, notFound } from "./errors.js";
import type { User } from "./model.js";
import { checkPassword, passwordFields, passwordMatches, revokeLogins, sha256 } from "./users.js";

const RESET_LIFETIME_MS = 24 * 3600_000;
/** How often one user may ask for a reset. */
const RESET_INTERVAL_MS = 60_000;
const MAX_KEY = 16 * 1024;

async function findUser(context: Context, email: string): Promise<User> {
  const user = await context.store.get("users", email);
  if (!user) throw notFound(`User "${email}" not found.`);
  return user;
}

/**
 * `POST /users/<email>/password[?token=]`. Without a token: a reset token, printed on the
 * platform's terminal. With the token that was printed: a new random password, printed too.
 * Anonymous callers learn nothing from the answer: without a token it is the same whether the
 * address is a user's or not, and whether a token was made or not; with one, 403 for any token
 * that is not that user's.
 */
export async function resetPassword(context: Context, email: string, token: string | undefined): Promise<void> {
  if (token === undefined || token === "") {
    if (!(await context.store.get("users", email))) return;
    // One outstanding reset per user, a new one at most every minute: anonymous callers cannot
    // fill the store or the operator's terminal.
    const outstanding = (await context.store.all("resets")).filter((reset) => reset.email === email);
    const newest = Math.max(0, ...outstanding.map((reset) => reset.expiresAt - RESET_LIFETIME_MS));
    if (Date.now() - newest < RESET_INTERVAL_MS) return;
    await Promise.all(outstanding.map((reset) => context.store.delete("resets", reset.hash)));
    const fresh = randomBytes(20).toString("hex");
    await context.store.put("resets", sha256(fresh), { hash: sha256(fresh), email, expiresAt: Date.now() + RESET_LIFETIME_MS });
    context.say(`password reset for ${email}: POST /users/${email}/password?token=${fresh} sets a new password (valid 24 hours)`);
    return;
  }
  const stored = await context.store.get("resets", sha256(token));
  const user = await context.store.get("users", email);
  if (!user || !stored || stored.email !== email || stored.expiresAt <= Date.now()) {
    throw forbidden("Invalid or expired reset token: ask for a new one with POST /users/<email>/password.");
  }
  await context.store.delete("resets", stored.hash);
  const password = randomBytes(9).toString("base64url");
  await context.store.put("users", email, { ...user, ...(await passwordFields(password)) });
  await revokeLogins(context, email);
  context.say(`password reset for ${email}: the new password is ${password}`);
}

/** `PUT /users/password`: the spec's 400 (missing, length) and 403 (old does not match). */
export async function changePassword(context: Context, actor: Actor, old: string, wanted: string): Promise<void> {
  if (old === "" || wanted === "") throw badRequest("Both the old and the new passwords are required.");
  checkPassword(wanted);
  const user = await findUser(context, actor.email);
  if (!(await passwordMatches(user, old))) throw forbidden("The given password didn't match the user's current password.");
  await context.store.put("users", user.email, { ...user, ...(await passwordFields(wanted)) });
  await revokeLogins(context, user.email);
}


/** `DELETE /users`: the user leaves their teams and can no longer log in. No team is left empty. */
export async function removeUser(context: Context, actor: Actor): Promise<void> {
  const user = await findUser(context, actor.email);
  const teams = (await context.store.all("teams")).filter((team) => team.users.includes(user.email));
  const orphaned = teams.find((team) => team.users.length === 1);
  if (orphaned) {
    throw forbidden(`This user is the last member of the team "${orphaned.name}": remove the team or add another member first.`);
  }
  for (const team of teams) await context.store.put("teams", team.name, { ...team, users: team.users.filter((email) => email !== user.email) });
  await revokeLogins(context, user.email);
  if (user.apiKeyHash) await context.store.delete("apiKeys", user.apiKeyHash);
  await context.store.delete("users", user.email);
}

export async function addKey(context: Context, actor: Actor, content: string, name: string | undefined): Promise<void> {
  const key = content.trim();
  if (key === "") throw badRequest("Give the public key as {\"key\": \"ssh-ed25519 AAAA...\"}.");
  if (key.length > MAX_KEY) throw badRequest(`The key is longer than ${MAX_KEY} characters.`);
  const user = await findUser(context, actor.email);
  const keys = user.keys ?? [];
  if (keys.some((known) => known.content === key)) throw conflict("User already has this key.");
  let keyName = name?.trim() ?? "";
  for (let n = keys.length + 1; keyName === ""; n++) if (!keys.some((known) => known.name === `key-${n}`)) keyName = `key-${n}`;
  if (keys.some((known) => known.name === keyName)) throw conflict(`User already has a key named "${keyName}".`);
  await context.store.put("users", user.email, { ...user, keys: [...keys, { name: keyName, content: key }] });
}

/** By content (the spec's `{key}`) or by name (today's client). */
export async function removeKey(context: Context, actor: Actor, key: string): Promise<void> {
  if (key.trim() === "") throw badRequest('Give the key to remove as {"key": "<the public key>"} or {"name": "<its name>"}.');
  const user = await findUser(context, actor.email);
  const keys = user.keys ?? [];
  const kept = keys.filter((known) => known.content !== key.trim() && known.name !== key.trim());
  if (kept.length === keys.length) throw notFound("User does not have this key.");
  await context.store.put("users", user.email, { ...user, keys: kept });
}

export async function listKeys(context: Context, actor: Actor): Promise<Record<string, string>> {
  const user = await findUser(context, actor.email);
  return Object.fromEntries((user.keys ?? []).map((key) => [key.name, key.content]));
}

/** `{token, users}`; a user's first look creates the key. The key is kept only as a hash: shown when made (here on the first look), never again. */
const SHOWN_ONCE = "(shown once, when it was made: POST /users/api-key makes a new one)";

export async function apiKeyOf(context: Context, actor: Actor): Promise<{ token: string; users: string }> {
  const user = await findUser(context, actor.email);
  return { token: user.apiKeyHash ? SHOWN_ONCE : await regenerateApiKey(context, actor), users: user.email };
}

/** A new API key; the old one stops working. */
export async function regenerateApiKey(context: Context, actor: Actor): Promise<string> {
  const user = await findUser(context, actor.email);
  const key = randomBytes(32).toString("hex");
  if (user.apiKeyHash) await context.store.delete("apiKeys", user.apiKeyHash);
  await context.store.put("apiKeys", sha256(key), { hash: sha256(key), email: user.email });
  await context.store.put("users", user.email, { ...user, apiKeyHash: sha256(key) });
  return key;
}
