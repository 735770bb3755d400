/**
 * The pieces every route file uses: the acting user, validated path names and bodies (zod, at
 * the edge), and the answer shapes.
 */
import type { Request, RequestHandler, Response } from "express";
import { z } from "zod";
import type { Actor, Context } from "../domain/context.js";
import { badRequest } from "../domain/errors.js";
import { withinOperation } from "../domain/operation.js";
import { ANY_SERVICE_NAME, APP_NAME, EMAIL, TEAM_NAME } from "../domain/model.js";
import { INSTANCE_NAME_PATTERN } from "provider-kit/contract";

export { sendEmpty, sendJson, sendText } from "./answer.js";

export interface Call {
  req: Request;
  res: Response;
  context: Context;
  /** The authenticated user; routes served without auth must not read it. */
  actor: Actor;
}

export type Route = (call: Call) => Promise<void>;

export function handle(context: Context, route: Route): RequestHandler {
  return async (req, res, next) => {
    try {
      // Set by the auth step on protected routes.
      // One operation per request: the provider calls it sends are grouped under it.
      await withinOperation(`${req.method} ${req.path}`, () => route({ req, res, context, actor: res.locals.actor as Actor }));
    } catch (error) {
      next(error);
    }
  };
}

const NAMES = {
  app: [APP_NAME, "app name"],
  instance: [INSTANCE_NAME_PATTERN, "service instance name"],
  // A native service, or a broker's (`<broker>::<service>`).
  service: [ANY_SERVICE_NAME, "service name"],
  team: [TEAM_NAME, "team name"],
  email: [EMAIL, "email"],
} as const;

const MAX_NAME = 200;

/** A path segment checked against the platform's rule for that kind of name: nothing else reaches the domain. */
export function nameParam(req: Request, param: string, kind: keyof typeof NAMES): string {
  const value = String(req.params[param] ?? "");
  const [pattern, what] = NAMES[kind];
  if (value.length > MAX_NAME || !pattern.test(value)) throw badRequest(`Invalid ${what} "${value.slice(0, 60)}".`);
  return value;
}

/** The JSON (or form) body, checked against `schema`; the first problem is the answer. */
export function body<T>(req: Request, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(req.body ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const field = issue.path.length > 0 ? `"${issue.path.join(".")}": ` : "";
  throw badRequest(`Invalid request body: ${field}${issue.message}.`);
}

/** The plain-text body (YAML manifests, docs, commands). */
export function text(req: Request): string {
  return typeof req.body === "string" ? req.body : "";
}

export function query(req: Request, name: string): string | undefined {
  const value = req.query[name];
  return typeof value === "string" ? value : undefined;
}

const GO_TRUE = new Set(["1", "t", "T", "TRUE", "true", "True"]);

/**
 * A boolean as the platform reads its switches: Go's `strconv.ParseBool`, whose error the
 * platform drops (`force, _ := strconv.ParseBool(...)` in `unbindServiceInstance`,
 * `removeServiceInstance`): its true forms are true, anything else false.
 */
export function parseBool(value: unknown): boolean {
  return value === true || (typeof value === "string" && GO_TRUE.has(value));
}

/** A `?name=` switch (`?force=1`, `?unbindall=True`...), or the same form field; false when absent. */
export function flag(req: Request, name: string): boolean {
  const sent = (req.body as Record<string, unknown> | undefined)?.[name];
  return parseBool(query(req, name) ?? sent);
}
