/**
 * The handlers: one function per call the platform makes. provider-kit does the HTTP part
 * (routes, Basic auth, form and JSON bodies, validation, status codes, logging) and, with its
 * registry (src/main.ts picks its store), keeps each instance's state: it answers 404 for an unknown
 * instance, 409 for a duplicate create and 412 for a bind while the instance is provisioning,
 * before your handler is called. Throw provider-kit's errors (NotFoundError, BadRequestError,
 * ProviderError with a status) to answer anything else; their message is shown to the
 * platform's user, so make it short and say what to do. Never put a secret in a message or a log.
 */
import {
  BadRequestError,
  NotFoundError,
  type BindEnv,
  type Plan,
  type ProviderHandlers,
} from "provider-kit";
import { actions } from "./actions.js";
import type { Credentials, InMemoryDatabases } from "./resource.js";

export const PLANS: Plan[] = [
  { name: "small", description: "Shared database, 1 GB." },
  { name: "large", description: "Dedicated database, 20 GB, set up in the background." },
];

const DEFAULT_PLAN = "small";

function checkPlan(plan: string | undefined): string {
  const name = plan || DEFAULT_PLAN;
  if (!PLANS.some((known) => known.name === name)) {
    throw new BadRequestError(`Unknown plan "${name}": choose one of ${PLANS.map((p) => p.name).join(", ")}.`);
  }
  return name;
}

/**
 * What a bound app or job finds in its environment. Values are strings (the platform refuses
 * numbers). Prefix the names with your service's name so two services never collide.
 */
function bindEnv(databases: InMemoryDatabases, instance: string, credentials: Credentials): BindEnv {
  return {
    DATABASE_HOST: databases.host,
    DATABASE_NAME: instance,
    DATABASE_USER: credentials.user,
    DATABASE_PASSWORD: credentials.password,
  };
}

/** Each app gets its own user, keyed by app name (Variant B knows an app only by its host). */
const appUser = (request: { appName?: string; appHost?: string }) =>
  `app-${request.appName ?? request.appHost ?? "unknown"}`;

export function createHandlers(databases: InMemoryDatabases): ProviderHandlers {
  /** The registry already answers 404 for unknown instances; this keeps the handlers right without it. */
  const existing = (instance: string): string => {
    if (!databases.has(instance)) throw new NotFoundError(`Instance "${instance}" does not exist.`);
    return instance;
  };

  return {
    /** GET /resources/plans: the plans users pick from (`tsuru service-info`). Leave out to answer 404. */
    plans: () => PLANS,

    /**
     * POST /resources: create the resource. Return `{ data }` to keep values on the instance
     * record (`context.record.data` in later calls).
     *
     * Slow to create? The platform gives up after a while, so answer at once and finish in the
     * background: return `{ pending: true }` here and do the work in `provision`, as the large
     * plan does.
     */
    create(request) {
      const plan = checkPlan(request.plan);
      if (plan === "large") return { pending: true };
      databases.create(request.instance, plan);
    },

    /**
     * The background part of a create that returned `{ pending: true }`. Until it succeeds, status
     * answers 202 (carrying the latest `progress` message) and binds 412; a throw is retried. It
     * may run again after a crash, so make it idempotent.
     */
    async provision(record, { progress }) {
      await progress("setting up the dedicated database");
      databases.create(record.name, checkPlan(record.plan));
    },

    /** PUT /resources/:name: the full new state (plan, tags, parameters). Leave out to answer 404 ("not supported"). */
    update(request) {
      databases.changePlan(existing(request.instance), checkPlan(request.plan));
    },

    /** DELETE /resources/:name. Can also return `{ pending: true }` and finish in `deprovision`. */
    destroy(request) {
      databases.drop(existing(request.instance));
    },

    /**
     * POST /resources/:name/bind-app: give the app its own credentials. Called again for an app
     * that is already bound (the platform retries): return the same kind of answer, never fail.
     * Key anything per app by its name, not its host (hosts change with routers).
     */
    bindApp(request) {
      const instance = existing(request.instance);
      return bindEnv(databases, instance, databases.ensureUser(instance, appUser(request)));
    },

    /** DELETE /resources/:name/bind-app: revoke that app's credentials only. Already gone is fine. */
    unbindApp(request) {
      databases.dropUser(existing(request.instance), appUser(request));
    },

    /** POST /resources/:name/bind: one unit (container) of a bound app appeared; older platforms only. */
    bindUnit(request) {
      databases.allowHost(existing(request.instance), request.unitHost);
    },

    /** DELETE /resources/:name/bind: that unit went away. */
    unbindUnit(request) {
      databases.denyHost(existing(request.instance), request.unitHost);
    },

    /** PUT /resources/:name/binds/jobs/:job: like bindApp, for a job. */
    bindJob(request) {
      const instance = existing(request.instance);
      return bindEnv(databases, instance, databases.ensureUser(instance, `job-${request.jobName}`));
    },

    /** DELETE /resources/:name/binds/jobs/:job. */
    unbindJob(request) {
      databases.dropUser(existing(request.instance), `job-${request.jobName}`);
    },

    /**
     * GET /resources/:name/status: is the resource up? With the registry on this is asked only
     * once the instance is ready (the registry answers 202 while it provisions). Return
     * "running" (204), "pending" (202), { down: reason } (500) or { message } (200, shown as is).
     */
    status(request) {
      return databases.has(request.instance) ? "running" : { down: "The database is gone; remove this instance." };
    },

    /** GET /resources/:name: extra facts for `tsuru service-instance-info`. Keep it fast: it runs for every listed instance. */
    info(request) {
      const facts = databases.describe(existing(request.instance));
      return [
        { label: "Plan", value: facts.plan },
        { label: "Users", value: String(facts.users) },
        { label: "Allowed unit hosts", value: String(facts.allowedHosts) },
      ];
    },

    /**
     * Your own commands, declared in actions.ts: one handler each, typed from its declaration.
     * What a handler returns is the answer (JSON; nothing answers 204).
     */
    actions: actions.implement({
      allowHost({ instance, body }) {
        databases.allowHost(existing(instance), body.host);
        return { allowedHosts: databases.describe(instance).allowedHosts };
      },
    }),
  };
}
