/**
 * The catalog of checks: every rule the kit enforces, where the contract states it, and
 * which rules depend on which. The scenario (`scenario.ts`) produces the verdicts; this file
 * is the single place that says what a check id means (reports and docs are generated from it).
 */
import type { CheckDefinition, CheckGroup, Citation, Level, Variant } from "./types.js";

const ALL: readonly Variant[] = ["A", "B", "current"];
const A_AND_CURRENT: readonly Variant[] = ["A", "current"];
const CURRENT: readonly Variant[] = ["current"];
const B: readonly Variant[] = ["B"];

const spec = (line: number, quote: string): Citation => ({ file: "provider-interface.md", line, quote });
const notes = (line: number, quote: string): Citation => ({ file: "contract-notes.md", line, quote });

const NOT_FOUND = spec(72, "404 | the instance does not exist (bind, unbind, destroy)");

export const CHECKS: readonly CheckDefinition[] = [
  // auth
  {
    id: "auth.no-credentials",
    group: "auth",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "A call without credentials is refused with 401",
    cite: spec(65, "the platform authenticates to the provider with HTTP basic authentication"),
  },
  {
    id: "auth.wrong-password",
    group: "auth",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "A call with a wrong password is refused with 401",
    cite: spec(65, "The password is defined in the service manifest."),
  },
  {
    id: "auth.password-colon",
    group: "auth",
    level: "MUST",
    variants: CURRENT,
    title: "The password is compared whole: the right password followed by ':x' is refused with 401",
    cite: notes(12, "Passwords may contain `:`; split on the first `:`."),
  },

  // plans
  {
    id: "plans.status",
    group: "plans",
    level: { A: "MUST", current: "SHOULD" },
    variants: A_AND_CURRENT,
    title: "GET /resources/plans answers 200",
    cite: spec(41, "GET | /resources/plans | none | 200, JSON array of plans"),
  },
  {
    id: "plans.shape",
    group: "plans",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "The plans are a JSON array of {name, description} strings",
    cite: spec(17, "Plan (variant A) | name (string), description (string)"),
    dependsOn: ["plans.status"],
  },

  // create
  {
    id: "create.status",
    group: "create",
    level: "MUST",
    variants: ALL,
    title: "POST /resources with the platform's fields answers 2xx",
    cite: spec(42, "POST | /resources | name, plan, team (the team that owns the instance) | 201"),
  },
  {
    id: "create.duplicate",
    group: "create",
    level: "MUST",
    variants: CURRENT,
    title: "Creating an instance whose name is taken answers 409",
    cite: notes(37, "409 = already exists"),
    dependsOn: ["create.status"],
  },

  // status
  {
    id: "status.ready",
    group: "status",
    level: "MUST",
    variants: ALL,
    title: "GET /resources/<instance>/status answers 202 while pending and 204 (or 200 with text) once ready, within the timeout",
    cite: spec(48, "GET | /resources/<instance>/status | none | 202 pending, 204 running"),
    dependsOn: ["create.status"],
  },
  {
    id: "status.text-body",
    group: "status",
    level: "MUST",
    variants: CURRENT,
    title: "A 200 status answer carries the status text (never an empty body)",
    cite: notes(44, "200 = the body text IS the status"),
    dependsOn: ["create.status"],
  },

  // bind-app (Variant B binds by hostname with POST /resources/<instance>)
  {
    id: "bind-app.provisioning",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "Binding while the instance is still provisioning answers 412",
    cite: spec(32, "Binding is refused with 412 while the instance is still being provisioned."),
    dependsOn: ["create.status"],
  },
  {
    id: "bind-app.status",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "Binding an app to the ready instance answers 2xx",
    cite: spec(44, "POST | /resources/<instance>/bind-app | app-host; sent once when an app is bound"),
    dependsOn: ["status.ready"],
  },
  {
    id: "bind-app.json",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "The bind result is a JSON object or null",
    cite: notes(40, "An empty body fails. A number fails."),
    dependsOn: ["bind-app.status"],
  },
  {
    id: "bind-app.env-strings",
    group: "bind-app",
    level: "MUST",
    variants: CURRENT,
    title: "Every value of the bind result is a string",
    cite: notes(40, "< 300 and a JSON object of STRING values, or `null`"),
    dependsOn: ["bind-app.json"],
  },
  {
    id: "bind-app.rebind",
    group: "bind-app",
    level: "MUST",
    variants: CURRENT,
    title: "Binding the same app again answers 2xx with a JSON object or null",
    cite: notes(55, "Bind-app for an app that is already bound should return the same kind of credentials again"),
    dependsOn: ["bind-app.json"],
  },

  // bind-unit: Variant A's per-unit binds; today's platform no longer sends them.
  {
    id: "bind-unit.status",
    group: "bind-unit",
    level: { A: "MUST", current: "SHOULD" },
    variants: A_AND_CURRENT,
    title: "Binding a unit (POST /resources/<instance>/bind) answers 2xx",
    cite: spec(43, "POST | /resources/<instance>/bind | app-host (host at which the app is reachable), unit-host"),
    dependsOn: ["status.ready"],
  },
  {
    id: "bind-unit.unbind",
    group: "bind-unit",
    level: { A: "MUST", current: "SHOULD" },
    variants: A_AND_CURRENT,
    title: "Unbinding the unit (DELETE /resources/<instance>/bind) answers 2xx",
    cite: spec(45, "DELETE | /resources/<instance>/bind | app-host, unit-host"),
    dependsOn: ["bind-unit.status"],
  },

  // bind-job
  {
    id: "bind-job.status",
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "PUT /resources/<instance>/binds/jobs/<job> answers 2xx, or 404 when jobs are not supported",
    cite: notes(43, "PUT/DELETE /resources/{name}/binds/jobs/{job} (1.15+)"),
    dependsOn: ["status.ready"],
  },
  {
    id: "bind-job.supported",
    group: "bind-job",
    level: "SHOULD",
    variants: CURRENT,
    title: "Jobs can be bound (the job bind does not answer 404)",
    cite: notes(43, "PUT/DELETE /resources/{name}/binds/jobs/{job} (1.15+) | job-name, user, eventid"),
    dependsOn: ["bind-job.status"],
  },
  {
    id: "bind-job.result",
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "The job bind result is null or a JSON object of strings",
    cite: notes(43, "job-name, user, eventid, job pool/cluster | like bind-app"),
    dependsOn: ["bind-job.supported"],
  },
  {
    id: "bind-job.unbind",
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "Unbinding the job (DELETE /resources/<instance>/binds/jobs/<job>) answers 2xx",
    cite: notes(43, "PUT/DELETE /resources/{name}/binds/jobs/{job} (1.15+)"),
    dependsOn: ["bind-job.supported"],
  },

  // update
  {
    id: "update.status",
    group: "update",
    level: "MUST",
    variants: CURRENT,
    title: "PUT /resources/<instance> answers 2xx, or 404 when updates are not supported (never 405)",
    cite: notes(38, "405 is an ERROR, so an unimplemented update must answer 404, never 405"),
    dependsOn: ["status.ready"],
  },
  {
    id: "update.supported",
    group: "update",
    level: "SHOULD",
    variants: CURRENT,
    title: "Instances can be updated (the update does not answer 404)",
    cite: notes(38, "404 = \"not supported\", ignored"),
    dependsOn: ["update.status"],
  },

  // info
  {
    id: "info.status",
    group: "info",
    level: "MUST",
    variants: ALL,
    title: "GET /resources/<instance> answers 200, or 404 when there is no extra info",
    cite: spec(49, "GET | /resources/<instance> | none; optional endpoint | 200, JSON array of extra info items | 404"),
    dependsOn: ["status.ready"],
  },
  {
    id: "info.supported",
    group: "info",
    level: "SHOULD",
    variants: ALL,
    title: "The instance has extra info (the info call answers 200)",
    cite: spec(49, "GET | /resources/<instance> | none; optional endpoint"),
    dependsOn: ["info.status"],
  },
  {
    id: "info.shape",
    group: "info",
    level: "MUST",
    variants: ALL,
    title: "The extra info is a JSON array of {label, value} strings",
    cite: spec(18, "Extra info item | label (string), value (string)"),
    dependsOn: ["info.supported"],
  },

  // unbind-app (Variant B unbinds with DELETE /resources/<instance>/hostname/<host>)
  {
    id: "unbind-app.status",
    group: "unbind-app",
    level: "MUST",
    variants: ALL,
    title: "Unbinding the app answers 2xx",
    cite: spec(46, "DELETE | /resources/<instance>/bind-app | app-host; sent once when the app is unbound | 200"),
    dependsOn: ["bind-app.status"],
  },
  {
    id: "unbind-app.repeat",
    group: "unbind-app",
    level: "MUST",
    variants: CURRENT,
    title: "Unbinding an app that is no longer bound answers 2xx",
    cite: notes(56, "Unbind of a binding that is already gone should succeed."),
    dependsOn: ["unbind-app.status"],
  },

  // destroy
  {
    id: "destroy.status",
    group: "destroy",
    level: "MUST",
    variants: ALL,
    title: "DELETE /resources/<instance> answers 2xx",
    cite: spec(47, "DELETE | /resources/<instance> | none | 200, no body needed"),
    dependsOn: ["create.status"],
  },

  // not-found: every instance route, called for an instance that does not exist
  ...notFoundChecks(),

  // errors, over every answer of the run
  {
    id: "errors.explained",
    group: "errors",
    level: "MUST",
    variants: ALL,
    title: "Every 500 answer explains the failure in its body",
    cite: spec(74, "500 | any failure of the operation; the provider includes an explanation in the body"),
  },
  {
    id: "errors.plain-text",
    group: "errors",
    level: "SHOULD",
    variants: CURRENT,
    title: "Error answers with a body carry a short plain-text message (not HTML, not JSON)",
    cite: notes(31, "Error bodies are shown verbatim to the platform's user: make them short, human, plain text."),
  },

  // transport, over every answer of the run
  {
    id: "transport.no-405",
    group: "transport",
    level: "MUST",
    variants: CURRENT,
    title: "No call answers 405 (an unsupported optional route answers 404)",
    cite: notes(67, "405 on unimplemented optional routes"),
  },
  {
    id: "transport.no-redirect",
    group: "transport",
    level: "MUST",
    variants: CURRENT,
    title: "No call answers with a redirect (3xx)",
    cite: notes(28, "Redirects are followed as GET: a provider must never redirect"),
  },
];

/** The instance routes probed with an unknown instance, by check id suffix. */
function notFoundChecks(): CheckDefinition[] {
  const route = (
    name: string,
    what: string,
    variants: readonly Variant[],
    cite: Citation = NOT_FOUND,
    level: Level = "MUST",
  ): CheckDefinition => ({
    id: `not-found.${name}`,
    group: "not-found",
    level,
    variants,
    title: `${what} of an unknown instance answers 404`,
    cite,
  });
  return [
    route("bind-app", "POST /resources/<instance>/bind-app", A_AND_CURRENT),
    route("unbind-app", "DELETE /resources/<instance>/bind-app", A_AND_CURRENT),
    route("bind-unit", "POST /resources/<instance>/bind", A_AND_CURRENT),
    route("unbind-unit", "DELETE /resources/<instance>/bind", A_AND_CURRENT),
    route("bind-hostname", "POST /resources/<instance>", B),
    route("unbind-hostname", "DELETE /resources/<instance>/hostname/<host>", B),
    route("bind-job", "PUT /resources/<instance>/binds/jobs/<job>", CURRENT, notes(43, "| like bind-app | 412, 404")),
    route("unbind-job", "DELETE /resources/<instance>/binds/jobs/<job>", CURRENT, notes(43, "| like bind-app | 412, 404")),
    route("update", "PUT /resources/<instance>", CURRENT, notes(38, "404 = \"not supported\", ignored")),
    route("destroy", "DELETE /resources/<instance>", ALL),
    route("info", "GET /resources/<instance>", ALL, spec(72, "on the extra info call, no extra info exists")),
    route("status", "GET /resources/<instance>/status", ALL, notes(44, "404 = \"not implemented\""), "SHOULD"),
  ];
}

/** Groups whose checks look over every answer of the run: asking for them runs every step. */
export const WHOLE_RUN_GROUPS: readonly CheckGroup[] = ["errors", "transport"];

const byId = new Map(CHECKS.map((check) => [check.id, check]));

export function checkById(id: string): CheckDefinition {
  const check = byId.get(id);
  if (!check) throw new Error(`Unknown conformance check id "${id}".`);
  return check;
}

/** The level a check has when running against `variant`. */
export function levelIn(check: CheckDefinition, variant: Variant): Level {
  return typeof check.level === "string" ? check.level : (check.level[variant] ?? "MUST");
}

export function checksFor(variant: Variant): CheckDefinition[] {
  return CHECKS.filter((check) => check.variants.includes(variant));
}

export function formatCitation(cite: Citation): string {
  return `${cite.file}:${cite.line} "${cite.quote}"`;
}
