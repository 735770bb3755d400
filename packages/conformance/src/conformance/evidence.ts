/**
 * Exchanges reduced to what tells them apart for a reader: the method, the route (instance,
 * host and job names replaced by placeholders) and the status. Two failures resting on the same
 * answers share a root cause; evidence repeating an answer already shown is left out.
 */
import type { Exchange } from "./types.js";

/** `/resources/pkc-1a2b/binds/jobs/pkc-1a2b-job` → `/resources/<instance>/binds/jobs/<job>`. */
export function routeOf(path: string): string {
  const segments = path.split("/");
  // ["", "resources", instance, ...rest]
  if (segments[1] !== "resources" || segments[2] === undefined || segments[2] === "plans") return path;
  segments[2] = "<instance>";
  if (segments[3] === "hostname" && segments[4] !== undefined) segments[4] = "<host>";
  if (segments[3] === "binds" && segments[4] === "jobs" && segments[5] !== undefined) segments[5] = "<job>";
  return segments.join("/");
}

/** `PUT /resources/<instance> 405`; `no answer` when none came. */
export function answerKey(exchange: Exchange): string {
  return `${exchange.method} ${routeOf(exchange.path)} ${exchange.response?.status ?? "no answer"}`;
}

/**
 * `answerKey` plus what the body says, with the instance's name (a run's instances differ) made a
 * placeholder: two answers of one route and status are one fault only when they say the same thing
 * (a crash page for an unknown instance is not the status port a real instance cannot reach).
 */
export function faultKey(exchange: Exchange): string {
  const body = (exchange.response?.body ?? exchange.error ?? "").replace(/\s+/g, " ").trim();
  const instance = routeOf(exchange.path) === exchange.path ? undefined : exchange.path.split("/")[2];
  return `${answerKey(exchange)} ${instance ? body.replaceAll(decoded(instance), "<instance>") : body}`;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The first exchange of each distinct answer, with how many times it came. */
export function distinctAnswers<T extends { exchange: Exchange }>(items: readonly T[]): Array<{ first: T; count: number }> {
  const byKey = new Map<string, { first: T; count: number }>();
  for (const item of items) {
    const key = answerKey(item.exchange);
    const seen = byKey.get(key);
    if (seen) seen.count += 1;
    else byKey.set(key, { first: item, count: 1 });
  }
  return [...byKey.values()];
}

/** Why an answer of `status` came back, when the status alone says it: a hint for the reader. */
export function statusHint(method: string, path: string, status: number): string | undefined {
  if (status === 405) return `405 means the provider does not serve ${method} on ${routeOf(path)}`;
  if (status >= 300 && status < 400) return "the provider redirects instead of answering at this exact path";
  return undefined;
}
