/**
 * `GET /healthcheck/?check=all`: one line per component, `<Name>: WORKING (<duration>)` or
 * `<Name>: fail - <error>`, as the platform prints them. The components: the state store and
 * every registered provider (its `/healthcheck`, or its plans when it has none).
 */
import type { Context } from "./context.js";
import { providerProblem, statusOf, succeeded } from "./provider-answer.js";

export interface HealthReport {
  working: boolean;
  lines: string[];
}

/** Go's `time.Duration` text for the durations a check takes: `850µs`, `12.5ms`, `1.2s`. */
export function goDuration(ns: number): string {
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

export async function checkAll(context: Context): Promise<HealthReport> {
  const services = (await context.store.all("services")).sort((a, b) => a.name.localeCompare(b.name));
  const results = await Promise.all([
    check(`Store (${context.store.name})`, () => context.store.ping()),
    ...services.map((service) =>
      check(`Provider ${service.name}`, async () => {
        const calls = context.providers.builder(service, "healthcheck");
        let result = await context.providers.send({ service }, calls.healthcheck());
        if (statusOf(result) === 404) result = await context.providers.send({ service }, calls.plans());
        if (!succeeded(result)) throw new Error(providerProblem(result));
      }),
    ),
  ]);
  return { working: results.every((result) => result.ok), lines: results.map((result) => result.line) };
}
