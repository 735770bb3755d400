/**
 * The provider contract's wire facts, written once: the platform generations, the body
 * encodings, the name rules, the paths under an instance, the fields the platform sends with
 * their names in each encoding, and its headers. The server side (src/http, src/schemas.ts), the provider client
 * (src/provider-client), the conformance kit and the local platform all read them from here.
 * docs/contract.md says the same in words.
 */

/** `A` and `B` are the spec's variants; `current` is Variant A plus the calls today's platform makes. */
export type Variant = "A" | "B" | "current";
export const VARIANTS: readonly Variant[] = ["A", "B", "current"];

/** How request bodies come: form encoded (every platform) or camelCase JSON (platform 1.30+, `encoding: json`). */
export type Encoding = "form" | "json";
export const ENCODINGS: readonly Encoding[] = ["form", "json"];

/** Instance names as the platform accepts them: a letter, then at least one letter, digit, `-` or `_`. */
export const INSTANCE_NAME_PATTERN = /^[A-Za-z][-a-zA-Z0-9_]+$/;
/** App and job names in a provider's paths and bodies: a letter, then letters, digits, `-` and `_`. */
export const NAME_PATTERN = /^[A-Za-z][-a-zA-Z0-9_]*$/;
export const NAME_MAX_LENGTH = 63;
/** A `create` with this name would shadow `GET /resources/plans`. */
export const RESERVED_INSTANCE_NAMES: ReadonlySet<string> = new Set(["plans"]);

/**
 * The contract's paths under an instance (`/resources/<instance>` itself aside), in every
 * variant. The platform's proxy forwards its users' calls to any other path there: a provider's
 * custom actions, which must not overlap these.
 */
export const INSTANCE_SUBPATHS: readonly string[] = ["/status", "/bind-app", "/bind", "/binds/jobs/:job", "/hostname/:host"];

/** Names of custom actions in the platform's service manifest (1.31); each becomes a permission. */
export const ACTION_NAME_PATTERN = /^[a-z0-9-]+(\.[a-z0-9-]+)*$/;
/** The methods of custom actions (a `GET` one also answers `HEAD`). */
export const ACTION_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** Pool and cluster the platform says the app or job runs on (multi-cluster services). */
export interface Placement {
  poolName?: string;
  poolProvisioner?: string;
  clusterName?: string;
  clusterProvisioner?: string;
  clusterAddresses: string[];
}

/** The placement as one call's headers carry it; the kube config (base64 of its JSON) is a secret. */
export interface PlacementHeaders extends Placement {
  clusterKubeConfig?: string;
}

/** A field the platform sends: one value, or a list (repeated form keys, a JSON array). */
export type FieldKind = "text" | "list";

export interface WireField {
  /** The name requests carry it under once decoded (`appName`, `eventId`, `poolName`). */
  canonical: string;
  /** Its names in a form body; app and job placement fields share a canonical name. */
  form: readonly string[];
  /** Its names in a JSON body, in the order of `form` (the platform sends these); any extra is accepted too. */
  json: readonly string[];
  kind: FieldKind;
}

const field = (canonical: string, form: readonly string[], json: readonly string[], kind: FieldKind = "text"): WireField => ({
  canonical,
  form,
  json,
  kind,
});

/** Every field the platform sends in a body, `parameters.*` aside. */
export const FIELDS: readonly WireField[] = [
  field("name", ["name"], ["name"]),
  field("plan", ["plan"], ["plan"]),
  field("team", ["team"], ["team"]),
  field("description", ["description"], ["description"]),
  field("tags", ["tags"], ["tags"], "list"),
  field("user", ["user"], ["user"]),
  field("eventId", ["eventid"], ["eventID", "eventId", "eventid"]),
  field("appName", ["app-name"], ["appName"]),
  field("appHost", ["app-host"], ["appHost"]),
  field("appHosts", ["app-hosts"], ["appHosts"], "list"),
  field("appInternalHosts", ["app-internal-hosts"], ["appInternalHosts"], "list"),
  field("unitHost", ["unit-host"], ["unitHost"]),
  field("jobName", ["job-name"], ["jobName"]),
  field("hostname", ["hostname"], ["hostname"]),
  field("poolName", ["app-pool-name", "job-pool-name"], ["appPoolName", "jobPoolName"]),
  field("poolProvisioner", ["app-pool-provisioner", "job-pool-provisioner"], ["appPoolProvisioner", "jobPoolProvisioner"]),
  field("clusterName", ["app-cluster-name", "job-cluster-name"], ["appClusterName", "jobClusterName"]),
  field("clusterProvisioner", ["app-cluster-provisioner", "job-cluster-provisioner"], ["appClusterProvisioner", "jobClusterProvisioner"]),
  field("clusterAddresses", ["app-cluster-addresses", "job-cluster-addresses"], ["appClusterAddresses", "jobClusterAddresses"], "list"),
];

/** Nested parameters: `parameters.tls.enabled=true` in a form, `parameters: {tls: {enabled: …}}` in JSON. */
export const PARAMETERS_FIELD = "parameters";

/** The JSON name the platform sends for a form field; throws for a name the contract does not have. */
export function jsonName(formName: string): string {
  for (const { form, json } of FIELDS) {
    const index = form.indexOf(formName);
    if (index >= 0) return json[index]!;
  }
  throw new Error(`"${formName}" is not a field of the provider contract: add it to FIELDS in src/contract.ts.`);
}

/**
 * Headers the platform adds: who asked and the event (on changes), and where the instance lives
 * (multi-cluster services; on plans, the pool asked for).
 */
export const HEADERS = {
  user: "X-Tsuru-User",
  eventId: "X-Tsuru-Eventid",
  poolName: "X-Tsuru-Pool-Name",
  poolProvisioner: "X-Tsuru-Pool-Provisioner",
  clusterName: "X-Tsuru-Cluster-Name",
  clusterProvisioner: "X-Tsuru-Cluster-Provisioner",
  /** Repeated, one header per address. */
  clusterAddresses: "X-Tsuru-Cluster-Addresses",
  /** Base64 of the cluster's kube config as JSON, when the cluster propagates it: a secret. */
  clusterKubeConfig: "X-Tsuru-Cluster-Kube-Config",
} as const;

/** Service ids as the platform accepts them: the same rule as pool names. */
export const SERVICE_NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;

/** Pool names as the platform accepts them: lower-case letters, digits and `-`, a letter first, at most 40. */
export const POOL_NAME_PATTERN = /^[a-z][a-z0-9-]{0,39}$/;

/**
 * "A pool is needed": what a multi-cluster service answers to plans asked without a pool, when its
 * plans differ per pool. Status 400 and a JSON body whose `missing_params` lists `cluster`; the
 * platform then tells its user "You must provide the pool name, available pools: ...". Any other
 * answer but 200 is read as "no plans".
 */
export const POOL_REQUIRED = { status: 400, missingParam: "cluster" } as const;

/** The body of the "pool needed" answer, as the platform decodes it. */
export interface MissingParamsBody {
  msg: string;
  missing_params: string[];
}

export function poolRequiredBody(message: string): MissingParamsBody {
  return { msg: message, missing_params: [POOL_REQUIRED.missingParam] };
}

/**
 * Whether an answer to plans says "a pool is needed", read as the platform reads it: a 400 whose
 * body decodes as `{msg?: string, missing_params: string[]}` with `cluster` among the names.
 */
export function isPoolRequired(status: number, body: string): boolean {
  if (status !== POOL_REQUIRED.status) return false;
  let decoded: unknown;
  try {
    decoded = JSON.parse(body);
  } catch {
    return false;
  }
  if (typeof decoded !== "object" || decoded === null || Array.isArray(decoded)) return false;
  const { msg, missing_params: missing } = decoded as { msg?: unknown; missing_params?: unknown };
  // Go's decoder refuses the whole body when a field has the wrong type.
  if (msg !== undefined && msg !== null && typeof msg !== "string") return false;
  return Array.isArray(missing) && missing.every((name) => typeof name === "string") && missing.includes(POOL_REQUIRED.missingParam);
}

/** The platform's service manifest (1.31): which proxied calls are which action. */
export interface ActionsManifest {
  enabled: boolean;
  strict_actions: boolean;
  legacy_compat: boolean;
  /** Paths relative to the instance, parameters as `{name}`. */
  operations: Array<{ method: (typeof ACTION_METHODS)[number]; path: string; action: string }>;
}
