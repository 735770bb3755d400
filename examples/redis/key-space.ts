/**
 * What of a Redis server belongs to which instance: its keys and channels (everything under its
 * key prefix) and its ACL users (everything under its user prefix). Both protocols' instances
 * share the `shared` plan's server, so for any two instances, native or OSB, neither prefix may
 * be a prefix of the other's: then no key, channel or user can belong to both, and an ACL
 * pattern, a SCAN or a removal of one never reaches the other's.
 *
 * Every prefix ends with a delimiter its label cannot hold, so prefixes of distinct labels never
 * extend one another:
 * - native instance `<name>` (a letter, then letters, digits, `-`, `_`): keys `<name>:`, users
 *   `<name>.` (as ever: existing instances and bound apps keep theirs);
 * - OSB instance, registered as `osb:<id>` (letters, digits, `.`, `_`, `~`, `-`): keys and users
 *   `osb@<id>:`. `@` is in no native name, so no native prefix covers an OSB one or the other way
 *   round; `:` is in no id, so `osb@t1:` does not cover `osb@t1.x:` (`.` is, so `.` cannot end it).
 * The registry's keys and the rules marker user start with `_`, which starts no label.
 */
import { INSTANCE_NAME_PATTERN, OSB_NAME_PATTERN } from "provider-kit";

/** Between `osb` and the id: a character neither native names nor OSB ids hold. */
const OSB_LABEL = "osb@";

/** The OSB id of a registry name `osb:<id>`, or undefined for a native name. */
function osbId(instance: string): string | undefined {
  return OSB_NAME_PATTERN.test(instance) ? instance.slice(instance.indexOf(":") + 1) : undefined;
}

function refuse(instance: string): never {
  throw new Error(`"${instance}" is no instance name: the registry names instances by the contract's name rule, or osb:<id>.`);
}

/** Every key and channel of the instance starts with this (the app's `REDIS_KEY_PREFIX`). */
export function keyPrefix(instance: string): string {
  const id = osbId(instance);
  if (id !== undefined) return `${OSB_LABEL}${id}:`;
  if (INSTANCE_NAME_PATTERN.test(instance)) return `${instance}:`;
  return refuse(instance);
}

/** Every ACL user of the instance (one per binding, and the health user) starts with this. */
export function userPrefix(instance: string): string {
  const id = osbId(instance);
  if (id !== undefined) return `${OSB_LABEL}${id}:`;
  if (INSTANCE_NAME_PATTERN.test(instance)) return `${instance}.`;
  return refuse(instance);
}

const isInstanceName = (name: string) => OSB_NAME_PATTERN.test(name) || INSTANCE_NAME_PATTERN.test(name);

/** The instance an ACL user belongs to, by its name; undefined for a user of no instance (`default`, markers). */
export function instanceOfUser(user: string): string | undefined {
  const instance = user.startsWith(OSB_LABEL) ? `osb:${user.slice(OSB_LABEL.length, user.indexOf(":"))}` : user.slice(0, user.indexOf("."));
  return isInstanceName(instance) && user.startsWith(userPrefix(instance)) ? instance : undefined;
}

/**
 * The glob (ACL `~`/`&` patterns, SCAN MATCH) of everything under `prefix`. Glob characters are
 * escaped, so the pattern means the prefix literally: names hold none today, and a name rule
 * that one day allows them must not turn a prefix into a wildcard.
 */
export function under(prefix: string): string {
  return `${prefix.replace(/[*?[\]\\]/g, "\\$&")}*`;
}
