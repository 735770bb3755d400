/**
 * The provider's own facts about an instance (`GET /resources/<i>`, `[{label, value}]`), which
 * instance info shows, and service info once per instance listed, as `{label: value}`. As the
 * platform: any answer but a 200 of that shape is no info (`null`), never an error, so a listing
 * still answers; and a provider that does not answer soon is given up, so it cannot hold one up.
 */
import { infoProblem } from "provider-kit/contract";
import type { Actor, Context } from "./context.js";
import type { Instance, Service } from "./model.js";
import { statusOf } from "./provider-answer.js";

/** Longer than an info call of a healthy provider takes; a listing waits this long at most. */
const INFO_TIMEOUT_MS = 10_000;

export async function providerInfo(context: Context, actor: Actor, service: Service, instance: Instance): Promise<Record<string, string> | null> {
  const call = context.providers.builder(service, actor.email).info(instance.name);
  const result = await context.providers.send({ service, instance: instance.name, pool: instance.pool }, call, { timeoutMs: INFO_TIMEOUT_MS });
  const body = result.answer?.body ?? "";
  if (statusOf(result) !== 200 || infoProblem(body) !== undefined) return null;
  const items = JSON.parse(body) as Array<{ label: string; value: string }>;
  return Object.fromEntries(items.map((item) => [item.label, item.value]));
}
