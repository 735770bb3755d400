/**
 * `GET /provider-calls?service=&instance=&app=` (beyond the spec): the calls made to the providers
 * of the services the user may use, oldest first.
 */
import { badRequest } from "../domain/errors.js";
import { APP_NAME, INSTANCE_NAME, SERVICE_NAME } from "../domain/model.js";
import { providerCallsFor } from "../domain/services.js";
import { query, sendJson, type Route } from "./handler.js";

const FILTERS = { service: SERVICE_NAME, instance: INSTANCE_NAME, app: APP_NAME } as const;

export const providerCallList: Route = async ({ req, res, context, actor }) => {
  const filter: Partial<Record<keyof typeof FILTERS, string>> = {};
  for (const [name, pattern] of Object.entries(FILTERS) as Array<[keyof typeof FILTERS, RegExp]>) {
    const value = query(req, name);
    if (value === undefined) continue;
    if (!pattern.test(value)) throw badRequest(`Invalid ${name} filter "${value.slice(0, 60)}".`);
    filter[name] = value;
  }
  sendJson(res, 200, await providerCallsFor(context, actor, filter));
};
