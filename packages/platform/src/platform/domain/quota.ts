/**
 * App quotas: a user may own at most their quota of apps (their own, else the platform's
 * default; -1 is unlimited). `items` counts the apps the user owns.
 */
import type { Actor, Context } from "./context.js";
import { forbidden, notFound } from "./errors.js";

export interface Quota {
  items: number;
  /** How many more apps the user may create; -1: unlimited. */
  available: number;
}

async function quotaOf(context: Context, email: string): Promise<Quota> {
  const user = await context.store.get("users", email);
  if (!user) throw notFound(`User "${email}" not found.`);
  const limit = user.quota ?? context.config.defaultQuota;
  const items = (await context.store.all("apps")).filter((app) => app.owner === email).length;
  return { items, available: limit < 0 ? -1 : Math.max(0, limit - items) };
}

/** A user's quota, shown to that user and to admins. */
export async function showQuota(context: Context, actor: Actor, email: string): Promise<Quota> {
  if (email !== actor.email && !actor.admin) throw forbidden("You may only see your own quota.");
  return quotaOf(context, email);
}

/** Throws 403 "Quota exceeded" when the user may not create one more app. */
export async function checkQuota(context: Context, email: string): Promise<void> {
  const quota = await quotaOf(context, email);
  if (quota.available === 0) throw forbidden("Quota exceeded");
}
