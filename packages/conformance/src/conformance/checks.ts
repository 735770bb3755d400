/**
 * The catalog of checks: every rule the kit enforces, where the contract states it, and
 * which rules depend on which. The scenario (`scenario.ts`) produces the verdicts; this file
 * is the single place that says what a check id means (reports and docs are generated from it).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { OSB_CHECKS } from "./osb/checks.js";
import type { CheckDefinition, CheckGroup, Citation, Level, Variant } from "./types.js";

const ALL: readonly Variant[] = ["A", "B", "current"];
const A_AND_CURRENT: readonly Variant[] = ["A", "current"];
const CURRENT: readonly Variant[] = ["current"];
const B: readonly Variant[] = ["B"];

/** The sections of docs/contract.md by the line of their heading (a test checks each is on its line). */
export const CONTRACT_SECTIONS: ReadonlyArray<readonly [line: number, name: string]> = [
  [13, "Transport"],
  [27, "Errors"],
  [38, "Plans"],
  [43, "Create"],
  [48, "Status"],
  [53, "Bind an app"],
  [61, "Bind a unit"],
  [65, "Bind a job"],
  [69, "Update"],
  [72, "Info"],
  [77, "Unbind an app"],
  [81, "Destroy"],
  [84, "Custom actions"],
  [90, "Pools and clusters"],
  [97, "The proxy's routes"],
];

function sectionAt(line: number): string {
  const section = CONTRACT_SECTIONS.filter(([heading]) => heading < line).at(-1);
  if (!section) throw new Error(`docs/contract.md:${line} is above its first section`);
  return section[1];
}

/** A line of docs/contract.md (a test checks that each quote is on its line). */
const contract = (line: number, quote: string): Citation => ({ file: "docs/contract.md", line, section: sectionAt(line), quote });

const NOT_FOUND = contract(29, "404: the instance does not exist");
/** The family of the unknown-instance probes. */
const UNKNOWN_INSTANCE = "unknown-instance";

export const CHECKS: readonly CheckDefinition[] = [
  // auth
  {
    id: "auth.no-credentials",
    group: "auth",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "A call without credentials is refused with 401",
    cite: contract(15, "refuse a call without them, or with a wrong password, with 401"),
    advice: "Put Basic auth in front of every route (createProvider's `auth` option) and answer 401 when a call carries no credentials",
  },
  {
    id: "auth.wrong-password",
    group: "auth",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "A call with a wrong password is refused with 401",
    cite: contract(15, "refuse a call without them, or with a wrong password, with 401"),
    advice: "Compare the password with the service manifest's, in constant time, and answer 401 when it differs",
    followsFrom: ["auth.no-credentials"],
  },
  {
    id: "auth.password-colon",
    group: "auth",
    level: "MUST",
    variants: CURRENT,
    title: "The password is compared whole: the right password followed by ':x' is refused with 401",
    cite: contract(17, "split the decoded credentials on the first `:` only, and compare the whole rest"),
    advice: "Split the decoded credentials on the first \":\" only and compare the whole rest with the password",
    // Only telling once wrong passwords are refused at all.
    dependsOn: ["auth.wrong-password"],
  },

  // plans
  {
    id: "plans.status",
    group: "plans",
    // Both eras' clients read any other answer as "no plans": the service still works.
    level: "SHOULD",
    variants: A_AND_CURRENT,
    title: "GET /resources/plans answers 200 (or, from a multi-cluster service on today's platform, \"pool needed\")",
    cite: contract(39, "`GET /resources/plans` answers 200 with a JSON array of plans."),
    advice: "Serve GET /resources/plans with 200 and the plans (handlers.plans), or, for a multi-cluster service, 400 \"pool needed\"",
  },
  {
    id: "plans.shape",
    group: "plans",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "The plans are a JSON array of {name, description} strings",
    cite: contract(40, "A plan is an object with a `name` (string) and a `description` (string)."),
    advice: "Answer the plans as a JSON array of { name, description } objects whose values are strings",
    dependsOn: ["plans.status"],
  },

  // pools: a multi-cluster service's plans, asked per pool
  {
    id: "pools.pool-read",
    needs: ["multi-cluster"],
    group: "pools",
    level: "MUST",
    variants: CURRENT,
    title: "Plans asked for a pool (its X-Tsuru-Pool-* and X-Tsuru-Cluster-* headers) never answer \"pool needed\" (400, missing_params [\"cluster\"])",
    cite: contract(92, "a call that names a pool never gets this answer"),
    advice: "Read the pool from the call's X-Tsuru-Pool-Name header (context.placement.pool) and answer that pool's plans, never \"pool needed\"",
  },
  {
    id: "pools.plans",
    needs: ["multi-cluster"],
    group: "pools",
    // Not a SHOULD like plans.status: a service that needs a pool has no plans but a pool's.
    level: "MUST",
    variants: CURRENT,
    title: "Plans asked for each pool answer 200 with a JSON array of {name, description} strings",
    cite: contract(91, "they answer 200 with that pool's plans"),
    advice: "For each pool, answer 200 with a JSON array of { name, description } strings: that pool's plans",
    dependsOn: ["pools.pool-read"],
  },

  // create
  {
    id: "create.status",
    group: "create",
    level: "MUST",
    variants: ALL,
    title: "POST /resources with the platform's fields answers 2xx",
    cite: contract(44, "answers 2xx (201 in the written interface)"),
    advice: "Make POST /resources answer 201 once the instance exists, or return { pending: true } from create and finish in provision",
  },
  {
    id: "create.fresh-name",
    group: "create",
    level: "MUST",
    variants: ALL,
    title: "A second instance, named like the first plus \"-2\" (a long shared prefix), is created too: a fresh name is never refused as taken",
    cite: contract(44, "answers 2xx (201 in the written interface)"),
    advice: "Key instances by their whole name (never a prefix or a shortened one), so a new name is never found taken",
    dependsOn: ["create.status"],
  },
  {
    id: "create.duplicate",
    group: "create",
    level: "MUST",
    variants: ALL,
    title: "Creating an instance whose name is taken answers 409",
    cite: contract(45, "A create for a name that already exists answers 409"),
    advice: "Look the name up before creating and answer 409 when an instance of that name exists (ConflictError)",
    dependsOn: ["create.status"],
  },
  {
    id: "create.unknown-plan",
    group: "create",
    level: "MUST",
    variants: A_AND_CURRENT,
    title: "Creating an instance with a plan the provider does not list answers 4xx or 500, with an explanation",
    cite: contract(46, "answer 400 (any 4xx) or 500, with an explanation, never a crash page"),
    advice: "Check the plan against the plans you list and answer 400 with a sentence naming them (BadRequestError)",
    // Needs no plan list: the kit's made-up plan is unknown to any provider.
    // Refused as taken, its fresh name was cut short like the second instance's.
    followsFrom: ["create.fresh-name"],
  },

  // status
  {
    id: "status.ready",
    group: "status",
    level: "MUST",
    variants: ALL,
    title: "GET /resources/<instance>/status answers 202 while pending and 204 (or 200 with text) once ready, within the timeout",
    cite: contract(49, "answers 202 while the instance is provisioning, 204 once it is ready"),
    advice: "Answer the status with 202 while the instance provisions and 204 once it is ready (with the registry on, provider-kit does it)",
    dependsOn: ["create.status"],
  },
  {
    id: "status.text-body",
    group: "status",
    level: "MUST",
    variants: CURRENT,
    title: "A 200 status answer carries the status text (never an empty body)",
    cite: contract(50, "A 200 answer means its body text is the status"),
    advice: "Answer 204 when the instance is ready, or 200 with the status text as the body; never 200 with an empty body",
    dependsOn: ["create.status"],
  },

  {
    id: "status.pending-text",
    group: "status",
    // Today's platform reads only the 202: a body it cannot show loses nothing but the progress.
    level: "SHOULD",
    variants: ALL,
    title: "A 202 status answer with a body (the work's progress) carries a short line of plain text (not HTML, not JSON)",
    cite: contract(49, "a 202 needs no body, and one that has a body (the work's progress) carries a short plain-text line"),
    advice: "Send a 202's body as one short line of text/plain (context.progress(message) in provision does), or no body at all",
    dependsOn: ["create.status"],
  },

  // bind-app (Variant B binds by hostname with POST /resources/<instance>)
  {
    id: "bind-app.provisioning",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "Binding while the instance is still provisioning answers 412",
    cite: contract(58, "While the instance is still being provisioned, a bind answers 412."),
    advice: "Refuse a bind with 412 until the instance is ready (NotReadyError; with the registry on, provider-kit does it)",
    dependsOn: ["create.status"],
  },
  {
    id: "bind-app.status",
    needs: ["bindable-instance"],
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "Binding an app to the instance answers 2xx",
    cite: contract(54, "sent once when an app is bound, answers 2xx with the bind result"),
    advice: "Make bind-app answer 201 with the app's variables for an instance that exists",
    // Not status.ready: the platform binds without asking the status first.
    dependsOn: ["create.status"],
  },
  {
    id: "bind-app.json",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "The bind result is a JSON object or null",
    cite: contract(55, "an empty body, a number or an array fails the bind"),
    advice: "Answer the bind with a JSON object of variables, or null; never an empty body, a number or an array",
    dependsOn: ["bind-app.status"],
  },
  {
    id: "bind-app.env-strings",
    group: "bind-app",
    level: "MUST",
    variants: CURRENT,
    title: "Every value of the bind result is a string",
    cite: contract(56, "Today's platform needs every value of the bind result to be a string."),
    advice: "Make every value of the bind result a string (String(port), not port)",
    dependsOn: ["bind-app.json"],
  },
  {
    id: "bind-app.rebind",
    group: "bind-app",
    level: "MUST",
    variants: ALL,
    title: "Binding the same app again answers 2xx with a JSON object or null",
    cite: contract(57, "A bind for an app that is already bound answers 2xx with the same kind of result again"),
    advice: "Make bind-app idempotent: an app already bound gets 201 and the same kind of variables again",
    dependsOn: ["bind-app.json"],
  },

  // bind-unit: Variant A's per-unit binds, optional (404: not supported); today's platform no longer sends them.
  {
    id: "bind-unit.status",
    needs: ["bindable-instance"],
    group: "bind-unit",
    level: { A: "MUST", current: "SHOULD" },
    variants: A_AND_CURRENT,
    title: "Binding a unit (POST /resources/<instance>/bind) answers 2xx, or 404 when unit binds are not supported",
    cite: contract(62, "sent every time an app adds a unit, answers 2xx; 404 means \"unit binds not supported\""),
    advice: "Answer POST /resources/<instance>/bind with 2xx (handlers.bindUnit), or 404 when unit binds are not supported; never 405 or 500",
    dependsOn: ["create.status"],
  },
  {
    id: "bind-unit.supported",
    group: "bind-unit",
    level: "SHOULD",
    variants: A_AND_CURRENT,
    title: "Units can be bound (the unit bind does not answer 404)",
    cite: contract(62, "404 means \"unit binds not supported\""),
    advice: "Implement handlers.bindUnit and handlers.unbindUnit if each unit of an app needs its own access (optional)",
    dependsOn: ["bind-unit.status"],
  },
  {
    id: "bind-unit.unbind",
    group: "bind-unit",
    level: { A: "MUST", current: "SHOULD" },
    variants: A_AND_CURRENT,
    title: "Unbinding the unit (DELETE /resources/<instance>/bind) answers 2xx",
    cite: contract(63, "sent every time an app removes a unit, answers 2xx"),
    advice: "Answer DELETE /resources/<instance>/bind with 2xx for a unit bound before (handlers.unbindUnit)",
    dependsOn: ["bind-unit.supported"],
  },

  // bind-job
  {
    id: "bind-job.status",
    needs: ["bindable-instance"],
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "PUT /resources/<instance>/binds/jobs/<job> answers 2xx, or 404 when jobs are not supported",
    cite: contract(66, "behave like binding and unbinding an app; 404 means \"jobs not supported\""),
    advice: "Answer the job bind with 2xx (handlers.bindJob), or 404 when jobs are not supported; never 405 or 500",
    dependsOn: ["create.status"],
  },
  {
    id: "bind-job.supported",
    group: "bind-job",
    level: "SHOULD",
    variants: CURRENT,
    title: "Jobs can be bound (the job bind does not answer 404)",
    cite: contract(66, "behave like binding and unbinding an app; 404 means \"jobs not supported\""),
    advice: "Implement handlers.bindJob and handlers.unbindJob if jobs should use the service (optional)",
    dependsOn: ["bind-job.status"],
  },
  {
    id: "bind-job.result",
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "The job bind result is null or a JSON object of strings",
    cite: contract(67, "A job bind answers 2xx with a JSON object of string values, or `null`."),
    advice: "Answer the job bind with null or a JSON object of string values",
    dependsOn: ["bind-job.supported"],
  },
  {
    id: "bind-job.unbind",
    group: "bind-job",
    level: "MUST",
    variants: CURRENT,
    title: "Unbinding the job (DELETE /resources/<instance>/binds/jobs/<job>) answers 2xx",
    cite: contract(66, "behave like binding and unbinding an app"),
    advice: "Answer DELETE /resources/<instance>/binds/jobs/<job> with 2xx for a job bound before (handlers.unbindJob)",
    dependsOn: ["bind-job.supported"],
  },

  // update
  {
    id: "update.status",
    needs: ["bindable-instance"],
    group: "update",
    level: "MUST",
    variants: CURRENT,
    title: "PUT /resources/<instance> answers 2xx, or 404 when updates are not supported (never 405)",
    cite: contract(70, "404 means \"updates not supported\" and is ignored, 405 is an error"),
    advice: "Answer PUT /resources/<instance> with 2xx (handlers.update), or 404 when updates are not supported; never 405",
    dependsOn: ["create.status"],
  },
  {
    id: "update.supported",
    group: "update",
    level: "SHOULD",
    variants: CURRENT,
    title: "Instances can be updated (the update does not answer 404)",
    cite: contract(70, "404 means \"updates not supported\" and is ignored"),
    advice: "Implement handlers.update if users should change an instance's plan, tags or parameters (optional)",
    dependsOn: ["update.status"],
  },

  // info
  {
    id: "info.status",
    needs: ["bindable-instance"],
    group: "info",
    level: "MUST",
    variants: ALL,
    title: "GET /resources/<instance> answers 200, or 404 when there is no extra info (another status only warns: it reads as no info)",
    cite: contract(73, "it answers 200 with a JSON array of extra info items, or 404 when there is none"),
    advice: "Answer GET /resources/<instance> with 200 and the info items (handlers.info), or 404 when there is none",
    dependsOn: ["create.status"],
  },
  {
    id: "info.supported",
    group: "info",
    level: "SHOULD",
    variants: ALL,
    title: "The instance has extra info (the info call answers 200)",
    cite: contract(73, "`GET /resources/<instance>` is optional"),
    advice: "Implement handlers.info to show extra info about an instance (optional)",
    dependsOn: ["info.status"],
  },
  {
    id: "info.shape",
    group: "info",
    level: "MUST",
    variants: ALL,
    title: "The extra info is a JSON array of {label, value} strings",
    cite: contract(74, "An extra info item is an object with a `label` (string) and a `value` (string)."),
    advice: "Answer the info as a JSON array of { label, value } objects whose values are strings",
    dependsOn: ["info.supported"],
  },

  // unbind-app (Variant B unbinds with DELETE /resources/<instance>/hostname/<host>)
  {
    id: "unbind-app.status",
    group: "unbind-app",
    level: "MUST",
    variants: ALL,
    title: "Unbinding the app answers 2xx",
    cite: contract(78, "sent once when the app is unbound, answers 2xx"),
    advice: "Make unbind-app answer 200 for an app bound before, revoking that app's credentials only",
    dependsOn: ["bind-app.status"],
  },
  {
    id: "unbind-app.repeat",
    group: "unbind-app",
    level: "MUST",
    variants: ALL,
    title: "Unbinding an app that is no longer bound answers 2xx",
    cite: contract(79, "An unbind of a binding that is already gone answers 2xx"),
    advice: "Make unbind-app idempotent: an app that is no longer bound gets 200, never a failure",
    // Judged whatever the first unbind got; failing on the same answer, it repeats that failure.
    dependsOn: ["bind-app.status"],
    followsFrom: ["unbind-app.status"],
  },

  // destroy
  {
    id: "destroy.status",
    group: "destroy",
    level: "MUST",
    variants: ALL,
    title: "DELETE /resources/<instance> answers 2xx",
    cite: contract(82, "`DELETE /resources/<instance>` answers 2xx"),
    advice: "Make DELETE /resources/<instance> answer 200 once the instance is gone, or return { pending: true } and finish in deprovision",
    dependsOn: ["create.status"],
  },

  // isolation: what two bindings receive, compared (values never shown)
  {
    id: "isolation.apps",
    needs: ["bindable-instance"],
    group: "isolation",
    level: "SHOULD",
    variants: ALL,
    title: "Two apps bound to one instance get different credentials",
    cite: contract(59, "Each binding gets its own credentials, keyed by instance and app name"),
    advice: "Give each binding its own credentials, keyed by instance and app name, made on bind and revoked on unbind",
    dependsOn: ["bind-app.json"],
  },
  {
    id: "isolation.swap",
    group: "isolation",
    // Variant A's era sent only app-host: keying by it was all a provider could do then. Today's
    // platform refuses swaps (412 "swapping is deprecated" since 2024, tsuru api/app.go swap), so
    // there the check only warns: an app's address still changes with its router.
    level: "SHOULD",
    variants: A_AND_CURRENT,
    title:
      "Bindings are keyed by app name, not address: after two apps swap addresses, unbinding one leaves the other's credentials, and binding it again gives it new ones",
    cite: contract(59, "so that unbinding one app revokes that app's access only"),
    advice: "Key bindings by app name (request.appName), not by app host, which changes with the app's routers",
    // Two apps' credentials must differ to begin with. A failing rebind does not stop it: the
    // second app's bind after the swap still tells whether an unbind dropped the first's binding.
    dependsOn: ["isolation.apps"],
  },
  {
    id: "isolation.instances",
    needs: ["bindable-instance"],
    group: "isolation",
    level: "SHOULD",
    variants: ALL,
    title: "One app bound to two instances gets different credentials from each",
    cite: contract(59, "Each binding gets its own credentials, keyed by instance and app name"),
    advice: "Make credentials per instance too: key them by instance and app name, never by app alone",
    dependsOn: ["bind-app.json", "create.fresh-name"],
  },

  // actions: each operation of the service's manifest, on the created instance
  {
    id: "actions.exists",
    needs: ["manifest"],
    group: "actions",
    level: "MUST",
    variants: CURRENT,
    title: "Each operation of the service's manifest is served on the instance: the call the platform's proxy sends answers neither 404 nor 405, nor a 5xx",
    cite: contract(85, "each operation of the service's manifest (method, path, action) is one the provider serves there"),
    advice: "Serve each operation of the manifest at /resources/<instance><path> with its method (declareActions(...).implement(...)), without failing, or drop it from the manifest",
  },
  {
    id: "actions.auth",
    needs: ["manifest"],
    group: "actions",
    level: "MUST",
    variants: CURRENT,
    title: "Each operation of the service's manifest refuses a call without credentials with 401",
    cite: contract(86, "an action refuses a call without them with 401"),
    advice: "Put the actions behind the same Basic auth as every other route: answer 401 to a call without credentials",
  },
  {
    id: "actions.no-405",
    needs: ["manifest"],
    group: "actions",
    level: "MUST",
    variants: CURRENT,
    title: "No operation's path answers 405, with its own method or another one",
    cite: contract(87, "A method the provider does not serve on an action's path answers 404, never 405."),
    advice: "Answer 404 to a method an action's path does not serve, never 405",
    // A declared operation answering 405 is missing first.
    followsFrom: ["actions.exists"],
  },
  {
    id: "actions.bad-input",
    needs: ["manifest"],
    group: "actions",
    level: "MUST",
    variants: CURRENT,
    title: "Each write operation answers a malformed body with 2xx or a 4xx plain-text explanation, never a 5xx",
    cite: contract(88, "with a 4xx plain-text sentence saying what to send, never a crash page"),
    advice: "Validate an action's body and answer 400 with a sentence saying what to send (BadRequestError), never a 5xx",
  },

  // not-found: every instance route, called for an instance that does not exist
  ...notFoundChecks(),

  // errors, over every answer of the run
  {
    id: "errors.explained",
    group: "errors",
    level: "MUST",
    variants: ALL,
    title: "Every 500 answer explains the failure (not empty, not HTML, not a framework's default text)",
    cite: contract(33, "A framework's default page or bare status text (\"Internal Server Error\") explains nothing"),
    advice: "Answer a failure with a sentence saying what went wrong (throw a ProviderError with it), not a framework's page or bare status text",
    // A crash page is the fault of the check whose call crashed: that check already shows the answer.
    followsSharedAnswer: true,
  },
  {
    id: "errors.plain-text",
    group: "errors",
    level: "SHOULD",
    variants: CURRENT,
    title: "Error answers with a body carry a short plain-text message (not HTML, not JSON)",
    cite: contract(32, "a short, human, plain-text sentence, not an HTML page and not JSON"),
    advice: "Send error bodies as one short sentence of text/plain, not an HTML page and not JSON",
    followsFrom: ["errors.explained"],
    followsSharedAnswer: true,
  },

  // transport, over every answer of the run
  {
    id: "transport.no-405",
    group: "transport",
    level: "MUST",
    variants: CURRENT,
    title: "No call answers 405 (an unsupported optional route answers 404; on info and plans a 405 only warns)",
    cite: contract(24, "An unsupported optional call answers 404; 405 is read as an error on every call where 404 has a meaning."),
    advice: "Answer 404 to a route or method the provider does not support, never 405 (a router's default)",
    followsFrom: "any",
  },
  {
    id: "transport.no-redirect",
    group: "transport",
    level: "MUST",
    variants: CURRENT,
    title: "No call answers with a redirect (3xx)",
    cite: contract(21, "never answer with a redirect"),
    advice: "Serve each route at the exact path the platform calls, with no trailing-slash or other redirect",
    followsFrom: "any",
  },
  {
    id: "transport.no-secret",
    group: "transport",
    level: "MUST",
    variants: ALL,
    title: "No answer carries back the password or the Basic credentials the call sent (as sent, escaped or in base64), crash pages included",
    cite: contract(34, "No answer carries the service's password or its Basic credentials back"),
    advice: "Never put the Authorization header or the password in an answer: turn debug pages off, then change the password",
  },
  {
    id: "transport.json-content-type",
    group: "transport",
    level: "SHOULD",
    variants: ALL,
    title: "Plans, bind results and extra info are sent as application/json",
    cite: contract(23, "Answers with a body are JSON: send them as `application/json`"),
    advice: "Send plans, bind results and info with Content-Type: application/json",
  },
];

/** The instance routes probed with an unknown instance, by check id suffix. */
function notFoundChecks(): CheckDefinition[] {
  const route = (
    name: string,
    what: string,
    variants: readonly Variant[],
    sameRoute: string,
    cite: Citation = NOT_FOUND,
    level: Level = "MUST",
  ): CheckDefinition => ({
    id: `not-found.${name}`,
    group: "not-found",
    level,
    variants,
    title: `${what} of an unknown instance answers 404`,
    cite,
    advice: "Look the instance up before doing anything and answer 404 when it does not exist (NotFoundError)",
    // The same route failing the same way on the real instance is the one cause.
    followsFrom: [sameRoute],
    // Otherwise one missing lookup of the instance breaks them all.
    family: UNKNOWN_INSTANCE,
  });
  const unbind = contract(79, "a 404 on unbind is ignored by the platform: it has the same effect as a 2xx");
  return [
    route("bind-app", "POST /resources/<instance>/bind-app", A_AND_CURRENT, "bind-app.status"),
    {
      ...route("unbind-app", "DELETE /resources/<instance>/bind-app", A_AND_CURRENT, "unbind-app.status", unbind),
      title: "DELETE /resources/<instance>/bind-app of an unknown instance answers 404 (a 2xx only warns: the platform ignores 404 on unbind)",
    },
    route("bind-unit", "POST /resources/<instance>/bind", A_AND_CURRENT, "bind-unit.status"),
    route("unbind-unit", "DELETE /resources/<instance>/bind", A_AND_CURRENT, "bind-unit.unbind"),
    route("bind-hostname", "POST /resources/<instance>", B, "bind-app.status"),
    route("unbind-hostname", "DELETE /resources/<instance>/hostname/<host>", B, "unbind-app.status"),
    route("bind-job", "PUT /resources/<instance>/binds/jobs/<job>", CURRENT, "bind-job.status"),
    route("unbind-job", "DELETE /resources/<instance>/binds/jobs/<job>", CURRENT, "bind-job.unbind"),
    route("update", "PUT /resources/<instance>", CURRENT, "update.status"),
    route("destroy", "DELETE /resources/<instance>", ALL, "destroy.status"),
    {
      ...route("info", "GET /resources/<instance>", ALL, "info.status", contract(75, "The platform reads any answer other than 200 as \"no extra info\"")),
      title: "GET /resources/<instance> of an unknown instance answers 404 (another status than 200 only warns)",
    },
    route("status", "GET /resources/<instance>/status", ALL, "status.ready", contract(51, "A 404 means \"status not implemented\""), "SHOULD"),
  ];
}

/** Groups whose checks look over every answer of the run: asking for them runs every step. */
export const WHOLE_RUN_GROUPS: readonly CheckGroup[] = ["errors", "transport", "osb-errors"];

/** Both catalogs: the native checks and `check --osb`'s, whose ids all start with `osb-`. */
const byId = new Map([...CHECKS, ...OSB_CHECKS].map((check) => [check.id, check]));

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

/**
 * The contract where its reader opens it: run from the sources (a checkout), the repository's
 * docs/contract.md; built, the copy the package ships, node_modules/@provider-kit/conformance/docs/.
 */
const CONTRACT = fileURLToPath(
  new URL(/\/src\/conformance\/[^/]+$/.test(import.meta.url) ? "../../../../docs/contract.md" : "../../docs/contract.md", import.meta.url),
);

/** OSB's spec at the version the OSB checks judge, where anyone can open it (no copy is shipped). */
const OSB_SPEC_URL = "https://github.com/openservicebrokerapi/servicebroker/blob/v2.17/spec.md";

/**
 * Where the reader opens the cited line: the contract as a path from the working directory (a
 * terminal or an editor opens `file:line`), OSB's spec as a link to the line.
 */
function openable(cite: Citation): string {
  return cite.file === "docs/contract.md" ? `${path.relative(process.cwd(), CONTRACT)}:${cite.line}` : `${OSB_SPEC_URL}#L${cite.line}`;
}

/** A failed check's advice, with the section of the contract it follows from. */
export function adviceLine(check: CheckDefinition): string {
  const source = check.cite.file === "docs/contract.md" ? "contract" : "OSB v2.17";
  return `${check.advice} (${source}: ${check.cite.section}, ${openable(check.cite)})`;
}

/** The citation of a report's rule line: where the reader opens it, the words. */
export function formatCitation(cite: Citation): string {
  return `${openable(cite)} "${cite.quote}"`;
}

/** The citation as the check catalog states it, in the package's own terms (docs/contract.md). */
export function catalogCitation(cite: Citation): string {
  return `${cite.file}:${cite.line} "${cite.quote}"`;
}
