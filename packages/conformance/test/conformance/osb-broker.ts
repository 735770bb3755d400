/**
 * A small Open Service Broker (API 2.17) written for the kit's tests, over real HTTP: one
 * offering, a plan provisioned at once, one only in the background and one whose plan cannot be
 * changed, bindings with credentials, updates, deprovision in the background. Each `OsbFault`
 * breaks one rule of the spec.
 */
import { isDeepStrictEqual } from "node:util";
import express, { type NextFunction, type Request, type Response } from "express";

export const BROKER_CREDENTIALS = { username: "pkc-broker", password: "broker:s3cret" };
const SERVICE_ID = "7b1f5d6e-0000-4000-8000-0000000000aa";
const PLAN_IDS = { small: "7b1f5d6e-0000-4000-8000-0000000000a1", large: "7b1f5d6e-0000-4000-8000-0000000000a2", fixed: "7b1f5d6e-0000-4000-8000-0000000000a3" };
const KNOWN_PLANS: readonly string[] = Object.values(PLAN_IDS);
/** How long a racing handler of a faulty broker waits for the request it races (it goes on alone after that). */
const RACE_WINDOW_MS = 1500;

export type OsbFault =
  | "no-auth"
  | "catalog-no-plans"
  | "unstable-ids"
  | "any-version"
  | "version-400"
  | "async-without-accepts"
  | "wrong-async-code"
  | "identical-201"
  | "conflict-accepted"
  | "conflict-plan-only"
  | "malformed-accepted"
  | "required-field-accepted"
  | "bad-state"
  | "last-operation-unknown-410"
  | "deprovision-poll-404"
  | "binding-without-credentials"
  | "binding-identical-201"
  | "binding-conflict-accepted"
  | "binding-plan-conflict-accepted"
  | "binding-concurrent-201"
  | "unbind-missing-200"
  | "unbind-500"
  | "update-params-change-plan"
  | "update-plan-ignored"
  | "not-updateable-accepted"
  | "update-lost"
  | "deprovision-missing-200"
  | "text-errors"
  | "empty-error-fields";

interface Binding {
  app: string;
  planId: string;
  parameters: unknown;
}

interface Instance {
  planId: string;
  organization: string;
  space: string;
  parameters: unknown;
  /** Polls left before the operation in the background ends. */
  pollsLeft: number;
  removing: boolean;
  bindings: Map<string, Binding>;
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

/** Resolves once a second caller arrives (both go on together) or after RACE_WINDOW_MS: how a faulty broker's requests overlap. */
function meeting(): () => Promise<void> {
  let waiting: Array<() => void> = [];
  return () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      if (waiting.length >= 2) {
        const all = waiting;
        waiting = [];
        all.forEach((go) => go());
        return;
      }
      setTimeout(() => {
        waiting = waiting.filter((go) => go !== resolve);
        resolve();
      }, RACE_WINDOW_MS).unref();
    });
}

export function osbBroker(fault?: OsbFault): express.Express {
  const app = express();
  app.use(express.json());
  const instances = new Map<string, Instance>();
  let catalogCalls = 0;
  const overlappingUpdate = meeting();
  const overlappingBind = meeting();
  const fail = (res: Response, status: number, error: string, description: string) => {
    // Its 422s keep their error code: a 422 without one is osb-provision.sync's fault.
    if (fault === "text-errors" && status !== 422) res.status(status).type("text/plain").send(description);
    else if (fault === "empty-error-fields" && status === 409) res.status(status).json({ error, description: "" });
    else res.status(status).json({ error, description });
  };

  app.use((req, res, next) => {
    const expected = `Basic ${Buffer.from(`${BROKER_CREDENTIALS.username}:${BROKER_CREDENTIALS.password}`).toString("base64")}`;
    if (fault !== "no-auth" && req.get("authorization") !== expected) {
      return fault === "text-errors" ? fail(res, 401, "Unauthorized", "Unauthorized") : void res.status(401).end();
    }
    const version = req.get("x-broker-api-version");
    if (fault !== "any-version" && (version === undefined || !version.startsWith("2."))) {
      return fail(res, fault === "version-400" ? 400 : 412, "PreconditionFailed", "Send X-Broker-API-Version 2.x.");
    }
    next();
  });

  app.get("/v2/catalog", (_req, res) => {
    catalogCalls += 1;
    const plans = [
      { id: PLAN_IDS.small, name: "small", description: "Provisioned at once." },
      { id: PLAN_IDS.large, name: "large", description: "Provisioned in the background." },
      { id: PLAN_IDS.fixed, name: "fixed", description: "Provisioned at once; its plan cannot be changed.", plan_updateable: false },
    ];
    if (fault === "unstable-ids" && catalogCalls > 1) plans[0] = { ...plans[0]!, id: `${PLAN_IDS.small}-${catalogCalls}` };
    res.json({
      services: [
        {
          id: SERVICE_ID,
          name: "pkc-broker",
          description: "A broker for tests.",
          bindable: true,
          plan_updateable: true,
          instances_retrievable: true,
          plans: fault === "catalog-no-plans" ? [] : plans,
        },
      ],
    });
  });

  const acceptsIncomplete = (req: Request) => req.query.accepts_incomplete === "true";

  app.put("/v2/service_instances/:id", (req, res) => {
    const body = (req.body ?? {}) as Record<string, unknown>;
    const planId = typeof body.plan_id === "string" ? body.plan_id : PLAN_IDS.small;
    if (fault !== "malformed-accepted" && (body.service_id !== SERVICE_ID || !KNOWN_PLANS.includes(body.plan_id as string))) {
      return fail(res, 400, "BadRequest", "Give the service_id and a plan_id of the catalog.");
    }
    if (fault !== "required-field-accepted" && fault !== "malformed-accepted" && (!nonEmpty(body.organization_guid) || !nonEmpty(body.space_guid))) {
      return fail(res, 400, "BadRequest", "Give organization_guid and space_guid as non-empty strings.");
    }
    const wanted = { planId, organization: String(body.organization_guid), space: String(body.space_guid), parameters: body.parameters ?? {} };
    const existing = instances.get(req.params.id);
    if (existing) {
      const same =
        fault === "conflict-accepted" ||
        (existing.planId === wanted.planId &&
          (fault === "conflict-plan-only" ||
            (existing.organization === wanted.organization && existing.space === wanted.space && isDeepStrictEqual(existing.parameters, wanted.parameters))));
      if (!same) return fail(res, 409, "Conflict", "This instance exists with other attributes.");
      return void res.status(fault === "identical-201" ? 201 : 200).json({});
    }
    const background = planId === PLAN_IDS.large;
    if (background && !acceptsIncomplete(req)) {
      if (fault === "async-without-accepts") {
        instances.set(req.params.id, { ...wanted, pollsLeft: 1, removing: false, bindings: new Map() });
        return void res.status(202).json({ operation: "provision" });
      }
      return fail(res, 422, fault === "wrong-async-code" ? "AsyncNeeded" : "AsyncRequired", "This plan provisions in the background: send accepts_incomplete=true.");
    }
    instances.set(req.params.id, { ...wanted, pollsLeft: background ? 1 : 0, removing: false, bindings: new Map() });
    if (background) return void res.status(202).json({ operation: "provision" });
    res.status(201).json({});
  });

  app.get("/v2/service_instances/:id", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance || instance.pollsLeft > 0) return fail(res, 404, "NotFound", "No such instance.");
    res.json({ service_id: SERVICE_ID, plan_id: instance.planId, parameters: instance.parameters });
  });

  app.patch("/v2/service_instances/:id", async (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) return fail(res, 404, "NotFound", "No such instance.");
    const body = (req.body ?? {}) as { service_id?: unknown; plan_id?: unknown; parameters?: unknown };
    if (body.service_id !== SERVICE_ID || (body.plan_id !== undefined && !KNOWN_PLANS.includes(body.plan_id as string))) {
      return fail(res, 400, "BadRequest", "Give the service_id and, to change the plan, a plan_id of the catalog.");
    }
    const planId = body.plan_id as string | undefined;
    if (planId !== undefined && planId !== instance.planId && instance.planId === PLAN_IDS.fixed && fault !== "not-updateable-accepted") {
      return fail(res, 422, "NotSupported", "The plan of this instance cannot be changed.");
    }
    if (fault === "update-lost") {
      // Reads the instance, works, then writes back the whole of it: no lock.
      const read = { ...instance };
      await overlappingUpdate();
      if (planId === undefined) await new Promise((resolve) => setImmediate(resolve));
      Object.assign(instance, { planId: planId ?? read.planId, parameters: body.parameters ?? read.parameters });
      return void res.json({});
    }
    if (planId !== undefined && fault !== "update-plan-ignored") instance.planId = planId;
    if (planId === undefined && fault === "update-params-change-plan") instance.planId = PLAN_IDS.small;
    if (body.parameters !== undefined) instance.parameters = body.parameters;
    res.json({});
  });

  app.get("/v2/service_instances/:id/last_operation", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) {
      if (req.query.operation === "deprovision") return fault === "deprovision-poll-404" ? fail(res, 404, "NotFound", "No such instance.") : void res.status(410).json({});
      return fault === "last-operation-unknown-410" ? void res.status(410).json({}) : fail(res, 404, "NotFound", "No such instance.");
    }
    if (instance.pollsLeft > 0) {
      instance.pollsLeft -= 1;
      return void res.json({ state: fault === "bad-state" ? "running" : "in progress", description: "Working on it." });
    }
    if (instance.removing) {
      instances.delete(req.params.id);
      return fault === "deprovision-poll-404" ? fail(res, 404, "NotFound", "No such instance.") : void res.status(410).json({});
    }
    res.json({ state: "succeeded", description: "Done." });
  });

  app.delete("/v2/service_instances/:id", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) return void (fault === "deprovision-missing-200" ? res.status(200).json({}) : res.status(410).json({}));
    if (!acceptsIncomplete(req)) {
      instances.delete(req.params.id);
      return void res.status(200).json({});
    }
    instance.removing = true;
    instance.pollsLeft = 1;
    res.status(202).json({ operation: "deprovision" });
  });

  app.put("/v2/service_instances/:id/service_bindings/:binding", async (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) return fail(res, 404, "NotFound", "No such instance.");
    const body = (req.body ?? {}) as { plan_id?: unknown; bind_resource?: { app_guid?: string }; parameters?: unknown };
    if (!KNOWN_PLANS.includes(body.plan_id as string)) return fail(res, 400, "BadRequest", "Give a plan_id of the catalog.");
    const wanted: Binding = { app: body.bind_resource?.app_guid ?? "", planId: body.plan_id as string, parameters: body.parameters ?? {} };
    const answer = fault === "binding-without-credentials" ? {} : { credentials: { url: `pkc://${req.params.binding}`, password: "binding-secret" } };
    const existing = instance.bindings.get(req.params.binding);
    if (existing !== undefined) {
      const same =
        fault === "binding-conflict-accepted" ||
        (existing.app === wanted.app && isDeepStrictEqual(existing.parameters, wanted.parameters) && (fault === "binding-plan-conflict-accepted" || existing.planId === wanted.planId));
      if (!same) return fail(res, 409, "Conflict", "This binding exists with other attributes.");
      return void res.status(fault === "binding-identical-201" ? 201 : 200).json(answer);
    }
    // Looks the binding up, works, then stores it: no lock.
    if (fault === "binding-concurrent-201") await overlappingBind();
    instance.bindings.set(req.params.binding, wanted);
    res.status(201).json(answer);
  });

  app.delete("/v2/service_instances/:id/service_bindings/:binding", (req, res) => {
    const instance = instances.get(req.params.id);
    if (fault === "unbind-500") return fail(res, 500, "InternalError", "The binding cannot be removed.");
    if (!instance?.bindings.delete(req.params.binding)) return void res.status(fault === "unbind-missing-200" ? 200 : 410).json({});
    res.status(200).json({});
  });

  app.use((_req, res) => fail(res, 404, "NotFound", "No such route of the broker API."));
  // A body express.json() cannot parse ends here: 400, as any other error of the broker.
  app.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
    const status = error.status ?? 500;
    fail(res, status, status === 400 ? "BadRequest" : "InternalError", status === 400 ? "Send a JSON object as the body." : "The broker failed.");
  });

  return app;
}
