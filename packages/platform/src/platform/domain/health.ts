/**
 * `GET /healthcheck/?check=all`: one line per component, `<Name>: WORKING (<duration>)` or
 * `<Name>: fail - <error>`, as the platform prints them. The components: the state store and
 * the registered providers (their `/healthcheck`, or their plans when they have none).
 */
import type { Call } from "provider-kit/contract";
import type { Context } from "./context.js";
import type { Service } from "./model.js";
import { providerProblem, statusOf, succeeded } from "./provider-answer.js";

export interface HealthReport {
  working: boolean;
  lines: string[];
}

/** Go's `time.Duration` text for the durations a check takes: `850µs`, `12.5ms`, `1.2s`. */
function goDuration(ns: number): string {
  const trim = (value: number) => String(Number(value.toFixed(3)));
  if (ns < 1_000) return `${Math.round(ns)}ns`;
  if (ns < 1_000_000) return `${trim(ns / 1_000)}µs`;
  if (ns < 1_000_000_000) return `${trim(ns / 1_000_000)}ms`;
  return `${trim(ns / 1_000_000_000)}s`;
}

/** A component that has not answered by then is reported as failing (its call goes on in the background). */
const CHECK_TIMEOUT_MS = 10_000;

async function check(name: string, probe: () => Promise<void>): Promise<{ ok: boolean; line: string }> {
  const started = process.hrtime.bigint();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
  });
  try {
    await Promise.race([probe(), late]);
    return { ok: true, line: `${name}: WORKING (${goDuration(Number(process.hrtime.bigint() - started))})` };
  } catch (error) {
    return { ok: false, line: `${name}: fail - ${(error as Error).message.replace(/\s+/g, " ")}` };
  } finally {
    clearTimeout(timer);
  }
}

const OPTIONAL_ROUTE_MISSING = new Set([404, 405]);

/** Provider health is probed at most this often: a polled health check costs providers little. */
const PROVIDER_HEALTH_TTL_MS = 5_000;
const providerHealth = new WeakMap<Context, Map<string, { at: number; result: Promise<{ ok: boolean; line: string }> }>>();

/** The provider's health line, probed again once the last probe is older than the TTL. */
function providerLine(context: Context, service: Service): Promise<{ ok: boolean; line: string }> {
  const cache = providerHealth.get(context) ?? new Map<string, { at: number; result: Promise<{ ok: boolean; line: string }> }>();
  providerHealth.set(context, cache);
  const cached = cache.get(service.name);
  if (cached && Date.now() - cached.at < PROVIDER_HEALTH_TTL_MS) return cached.result;
  const result = check(`Provider ${service.name}`, async () => {
    const calls = context.providers.builder(service, "healthcheck");
    const probe = (call: Call) => context.providers.send({ service }, call, { record: false });
    // Healthy when it answers with the credentials accepted: the plans route, asked when there is no
    // /healthcheck, is optional too, so its 404 or 405 is no failure.
    let answer = await probe(calls.healthcheck());
    if (statusOf(answer) === 404) answer = await probe(calls.plans());
    if (!succeeded(answer) && !OPTIONAL_ROUTE_MISSING.has(statusOf(answer) ?? 0)) throw new Error(providerProblem(answer));
  });
  cache.set(service.name, { at: Date.now(), result });
  return result;
}

/**
 * The state store, and the providers of `services`: a caller that is not logged in gets the
 * store's line only (provider lines name services and repeat what providers answer).
 */
export async function checkAll(context: Context, services: Service[]): Promise<HealthReport> {
  const sorted = [...services].sort((a, b) => a.name.localeCompare(b.name));
  const results = await Promise.all([
    check(`Store (${context.store.name})`, () => context.store.ping()),
    ...sorted.map((service) => providerLine(context, service)),
  ]);
  return { working: results.every((result) => result.ok), lines: results.map((result) => result.line) };
}
