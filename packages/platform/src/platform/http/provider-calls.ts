/**
 * `GET /provider-calls?service=&instance=&app=&limit=&before=` (beyond the spec): the calls made
 * to the providers of the services the user may use, oldest first. `limit` keeps the newest n of
 * those with an id below `before`, for paging back; `X-Total-Count` says how many match in all.
 * Only the page's calls are read from the store: the timeline's small entries pick them.
 */
import { badRequest, forbidden } from "../domain/errors.js";
import { ANY_SERVICE_NAME, APP_NAME } from "../domain/model.js";
import { providerCallsFor } from "../domain/services.js";
import { query, sendJson, type Route } from "./handler.js";
import { INSTANCE_NAME_PATTERN } from "provider-kit/contract";

const MAX_PAGE = 1000;

function whole(req: Parameters<Route>[0]["req"], name: string, max: number): number | undefined {
  const raw = query(req, name);
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < 1 || value > max) throw badRequest(`${name} must be a whole number from 1 to ${max}.`);
  return value;
}

const FILTERS = { service: ANY_SERVICE_NAME, instance: INSTANCE_NAME_PATTERN, app: APP_NAME } as const;

export const providerCallList: Route = async ({ req, res, context, actor }) => {
  const filter: Partial<Record<keyof typeof FILTERS, string>> = {};
  for (const [name, pattern] of Object.entries(FILTERS) as Array<[keyof typeof FILTERS, RegExp]>) {
    const value = query(req, name);
    if (value === undefined) continue;
    if (!pattern.test(value)) throw badRequest(`Invalid ${name} filter "${value.slice(0, 60)}".`);
    filter[name] = value;
  }
  const limit = whole(req, "limit", MAX_PAGE);
  const before = whole(req, "before", Number.MAX_SAFE_INTEGER);
  const { calls, total } = await providerCallsFor(context, actor, filter, { limit, before });
  res.setHeader("X-Total-Count", String(total));
  sendJson(res, 200, calls);
};

/** `DELETE /provider-calls` (beyond the spec): the admin empties the timeline. */
export const providerCallClear: Route = async ({ res, context, actor }) => {
  if (!actor.admin) throw forbidden("Only the admin team may clear the provider call timeline.");
  await context.providers.clear();
  res.status(204).end();
};
