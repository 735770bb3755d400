/**
 * Isolation between bindings, judged from what two binds returned: each binding should carry
 * its own credentials, so that unbinding one app revokes that app's access only. The platform
 * cannot see this; comparing two bind results can. Values are compared, never printed.
 */
import { ok, problem, skip, type Verdict } from "./recorder.js";

/** PASSWORD, SECRET, TOKEN anywhere in the name; KEY at its end (API_KEY, not KEY_PREFIX). */
const SECRET_NAME = /PASSWORD|PASSWD|SECRET|TOKEN|KEY$/i;
/** `scheme://user:password@host...` */
const URL_WITH_PASSWORD = /^[a-z][\w+.-]*:\/\/[^/@:\s]*:[^/@\s]+@/i;
const WHAT_COUNTS = "a variable named like *PASSWORD*, *SECRET*, *TOKEN* or *KEY, or a URL with a password";

type Env = Record<string, unknown>;

function envOf(body: string): Env | undefined {
  try {
    const value: unknown = JSON.parse(body);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Env) : undefined;
  } catch {
    return undefined;
  }
}

/** The credential-looking variables of a bind result, by name. */
function credentials(env: Env): Map<string, string> {
  return new Map(
    Object.entries(env).filter(
      (entry): entry is [string, string] => typeof entry[1] === "string" && (SECRET_NAME.test(entry[0]) || URL_WITH_PASSWORD.test(entry[1])),
    ),
  );
}

/** Names of the credentials two bind results (raw bodies) both carry with the same value. */
export function sharedCredentials(first: string, second: string): string[] {
  const [a, b] = [envOf(first), envOf(second)];
  if (!a || !b) return [];
  const otherValues = new Set(credentials(b).values());
  return [...credentials(a)].filter(([, value]) => otherValues.has(value)).map(([name]) => name);
}

/**
 * Names of the variables that told two apps apart (`first` and `other`, their first binds) and
 * that `later` has with `first`'s value: `later` took over `first`'s binding (its user, say).
 */
export function takenIdentity(first: string, other: string, later: string): string[] {
  const [a, b, c] = [envOf(first), envOf(other), envOf(later)];
  if (!a || !b || !c) return [];
  return Object.entries(a)
    .filter(([name, value]) => typeof value === "string" && value !== "" && b[name] !== value && c[name] === value)
    .map(([name]) => name);
}

/** True when two bind results carry credentials, and the same ones (names and values). */
export function sameCredentials(first: string, second: string): boolean {
  const [a, b] = [envOf(first), envOf(second)];
  if (!a || !b) return false;
  const [secretsA, secretsB] = [credentials(a), credentials(b)];
  return secretsA.size > 0 && secretsA.size === secretsB.size && [...secretsA].every(([name, value]) => secretsB.get(name) === value);
}

export type Pair = "two apps on one instance" | "one app on two instances";

/** Compares the bind results (raw bodies) of two different bindings. */
export function isolationVerdict(first: string, second: string, pair: Pair): Verdict {
  const [a, b] = [envOf(first), envOf(second)];
  if (!a || !b || Object.keys(a).length === 0 || Object.keys(b).length === 0) {
    return skip(`a bind result of ${pair} exports no variables: nothing to compare`);
  }
  const [secretsA, secretsB] = [credentials(a), credentials(b)];
  if (secretsA.size === 0 && secretsB.size === 0) {
    if (pair === "one app on two instances") {
      const same = JSON.stringify(Object.entries(a).sort()) === JSON.stringify(Object.entries(b).sort());
      return same
        ? problem(`the two instances gave the same variables with the same values, none of them a credential (${WHAT_COUNTS}): they look like one shared resource`)
        : ok("no credentials, but the two instances gave different values");
    }
    return problem(
      `neither bind result carries a credential (${WHAT_COUNTS}): nothing tells the two apps apart, and unbinding one revokes nothing; give each binding its own credentials`,
    );
  }
  const shared = sharedCredentials(first, second);
  return shared.length === 0
    ? ok(`${secretsA.size} credential(s) compared, all different`)
    : problem(
        `${shared.join(", ")} had the same value for ${pair} (values not shown): give each binding its own credentials, so that unbinding one revokes only its access`,
      );
}
