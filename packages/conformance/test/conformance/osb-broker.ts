/**
 * A small Open Service Broker (API 2.17) written for the kit's tests, over real HTTP: one
 * offering, a plan provisioned at once and one only in the background, bindings with
 * credentials, deprovision in the background. Each `OsbFault` breaks one rule of the spec.
 */
import express, { type Request, type Response } from "express";

export const BROKER_CREDENTIALS = { username: "pkc-broker", password: "broker:s3cret" };
const SERVICE_ID = "7b1f5d6e-0000-4000-8000-0000000000aa";
const PLAN_IDS = { small: "7b1f5d6e-0000-4000-8000-0000000000a1", large: "7b1f5d6e-0000-4000-8000-0000000000a2" };

export type OsbFault =
  | "no-auth"
  | "catalog-no-plans"
  | "unstable-ids"
  | "any-version"
  | "async-without-accepts"
  | "wrong-async-code"
  | "identical-201"
  | "conflict-accepted"
  | "malformed-accepted"
  | "bad-state"
  | "deprovision-poll-404"
  | "binding-without-credentials"
  | "binding-identical-201"
  | "binding-conflict-accepted"
  | "unbind-missing-200"
  | "deprovision-missing-200"
  | "text-errors";

interface Instance {
  planId: string;
  /** Polls left before the operation in the background ends. */
  pollsLeft: number;
  removing: boolean;
  bindings: Map<string, string>;
}

export function osbBroker(fault?: OsbFault): express.Express {
  const app = express();
  app.use(express.json());
  const instances = new Map<string, Instance>();
  let catalogCalls = 0;
  const fail = (res: Response, status: number, error: string, description: string) => {
    if (fault === "text-errors" && status === 409) res.status(status).type("text/plain").send(description);
    else res.status(status).json({ error, description });
  };

  app.use((req, res, next) => {
    const expected = `Basic ${Buffer.from(`${BROKER_CREDENTIALS.username}:${BROKER_CREDENTIALS.password}`).toString("base64")}`;
    if (fault !== "no-auth" && req.get("authorization") !== expected) return void res.status(401).end();
    const version = req.get("x-broker-api-version");
    if (fault !== "any-version" && (version === undefined || !version.startsWith("2."))) return fail(res, 412, "PreconditionFailed", "Send X-Broker-API-Version 2.x.");
    next();
  });

  app.get("/v2/catalog", (_req, res) => {
    catalogCalls += 1;
    const plans = [
      { id: PLAN_IDS.small, name: "small", description: "Provisioned at once." },
      { id: PLAN_IDS.large, name: "large", description: "Provisioned in the background." },
    ];
    if (fault === "unstable-ids" && catalogCalls > 1) plans[0] = { ...plans[0]!, id: `${PLAN_IDS.small}-${catalogCalls}` };
    res.json({
      services: [{ id: SERVICE_ID, name: "pkc-broker", description: "A broker for tests.", bindable: true, plans: fault === "catalog-no-plans" ? [] : plans }],
    });
  });

  const acceptsIncomplete = (req: Request) => req.query.accepts_incomplete === "true";

  app.put("/v2/service_instances/:id", (req, res) => {
    const { service_id: serviceId, plan_id: planId } = (req.body ?? {}) as { service_id?: string; plan_id?: string };
    if (fault !== "malformed-accepted" && (serviceId !== SERVICE_ID || (planId !== PLAN_IDS.small && planId !== PLAN_IDS.large))) {
      return fail(res, 400, "BadRequest", "Give the service_id and a plan_id of the catalog.");
    }
    const existing = instances.get(req.params.id);
    if (existing) {
      if (existing.planId !== planId && fault !== "conflict-accepted") return fail(res, 409, "Conflict", "This instance exists with another plan.");
      return void res.status(fault === "identical-201" ? 201 : 200).json({});
    }
    const background = planId === PLAN_IDS.large;
    if (background && !acceptsIncomplete(req)) {
      if (fault === "async-without-accepts") {
        instances.set(req.params.id, { planId, pollsLeft: 1, removing: false, bindings: new Map() });
        return void res.status(202).json({ operation: "provision" });
      }
      return fail(res, 422, fault === "wrong-async-code" ? "AsyncNeeded" : "AsyncRequired", "This plan provisions in the background: send accepts_incomplete=true.");
    }
    instances.set(req.params.id, { planId: planId ?? PLAN_IDS.small, pollsLeft: background ? 1 : 0, removing: false, bindings: new Map() });
    if (background) return void res.status(202).json({ operation: "provision" });
    res.status(201).json({});
  });

  app.get("/v2/service_instances/:id/last_operation", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) {
      if (req.query.operation === "deprovision") return fault === "deprovision-poll-404" ? fail(res, 404, "NotFound", "No such instance.") : void res.status(410).json({});
      return fail(res, 404, "NotFound", "No such instance.");
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

  app.put("/v2/service_instances/:id/service_bindings/:binding", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance) return fail(res, 404, "NotFound", "No such instance.");
    const body = (req.body ?? {}) as { bind_resource?: { app_guid?: string } };
    const app = body.bind_resource?.app_guid ?? "";
    const existing = instance.bindings.get(req.params.binding);
    const answer = fault === "binding-without-credentials" ? {} : { credentials: { url: `pkc://${req.params.binding}`, password: "binding-secret" } };
    if (existing !== undefined) {
      if (existing !== app && fault !== "binding-conflict-accepted") return fail(res, 409, "Conflict", "This binding exists for another app.");
      return void res.status(fault === "binding-identical-201" ? 201 : 200).json(answer);
    }
    instance.bindings.set(req.params.binding, app);
    res.status(201).json(answer);
  });

  app.delete("/v2/service_instances/:id/service_bindings/:binding", (req, res) => {
    const instance = instances.get(req.params.id);
    if (!instance?.bindings.delete(req.params.binding)) return void res.status(fault === "unbind-missing-200" ? 200 : 410).json({});
    res.status(200).json({});
  });

  return app;
}
