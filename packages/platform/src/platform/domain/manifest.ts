/**
 * The service manifest, the raw YAML `POST|PUT /services` take: `id`, `username`, `password`,
 * `endpoint: {production}`, and beyond the old platform: `variant: A | B | current` (by default
 * the variant of the route that took it: A for the spec's YAML route, current for today's client's),
 * `encoding: form | json` (default form; only today's platform, `current`, knows json),
 * `multi-cluster: true` and an endpoint per cluster (`endpoint: {production, <cluster>}`), and
 * `team`, the owner team, as today's platform knows them. Other keys are ignored, as the platform ignores them.
 */
import { parse } from "yaml";
import { ENCODINGS, POOL_NAME_PATTERN, VARIANTS, type Encoding, type Variant } from "provider-kit/contract";
import { badRequest, failed } from "./errors.js";
import { SERVICE_NAME } from "./model.js";

export interface Manifest {
  id: string;
  username: string;
  password: string;
  endpoint: string;
  clusterEndpoints: Record<string, string>;
  multiCluster: boolean;
  variant: Variant;
  encoding: Encoding;
  /** The team responsible for the service (`team`): without it, the user's only team. */
  team?: string;
}


/** A manifest value as text, whatever YAML made of it, for the check and its message. */
function shown(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value) ?? "";
}

export function parseManifest(text: string): Manifest {
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    // The spec answers 500 to YAML that does not parse, with the parser's message.
    throw failed(`Invalid YAML: ${(error as Error).message.split("\n")[0]}`);
  }
  return manifestOf(document);
}

/**
 * The manifest's fields checked, from the parsed YAML or from today's client's form fields;
 * `defaultVariant` when it names none.
 */
export function manifestOf(document: unknown, defaultVariant: Variant = "A"): Manifest {
  if (document === null || typeof document !== "object" || Array.isArray(document)) {
    throw badRequest("The manifest must be a YAML mapping with id, password and endpoint.production.");
  }
  const fields = document as Record<string, unknown>;
  const endpoints: Record<string, unknown> = fields.endpoint && typeof fields.endpoint === "object" ? { ...fields.endpoint } : {};
  const { production, ...perCluster } = endpoints;
  const scalar = (value: unknown) => (typeof value === "string" || typeof value === "number" ? String(value) : "");
  const id = scalar(fields.id);
  const password = scalar(fields.password);
  const url = scalar(production);
  for (const [name, value] of [["id", id], ["password", password], ["endpoint", url]] as const) {
    if (value === "") throw badRequest(`You must provide a(n) ${name} in the manifest file.`);
  }
  if (!SERVICE_NAME.test(id)) {
    throw badRequest(`Invalid service id "${id.slice(0, 60)}": use lower-case letters, digits and dashes, starting with a letter, at most 40 characters.`);
  }
  const variant = (fields.variant === undefined || fields.variant === "" ? defaultVariant : shown(fields.variant)) as Variant;
  if (!VARIANTS.includes(variant)) throw badRequest(`Invalid variant "${String(variant).slice(0, 20)}": use A, B or current.`);
  const encoding = (fields.encoding === undefined || fields.encoding === "" ? "form" : shown(fields.encoding)) as Encoding;
  if (!ENCODINGS.includes(encoding)) throw badRequest(`Invalid encoding "${String(encoding).slice(0, 20)}": use form or json.`);
  const multiCluster = fields["multi-cluster"] ?? false;
  if (typeof multiCluster !== "boolean" && multiCluster !== "true" && multiCluster !== "false") {
    throw badRequest(`Invalid multi-cluster "${shown(multiCluster).slice(0, 20)}": use true or false.`);
  }
  const clusterEndpoints: Record<string, string> = {};
  for (const [cluster, address] of Object.entries(perCluster)) {
    if (!POOL_NAME_PATTERN.test(cluster)) throw badRequest(`Invalid endpoint "${cluster.slice(0, 40)}": name production or a cluster (lower-case letters, digits, dashes).`);
    clusterEndpoints[cluster] = withScheme(scalar(address), `endpoint.${cluster}`);
  }
  return {
    id,
    username: scalar(fields.username) || id,
    password,
    endpoint: withScheme(url, "endpoint.production"),
    clusterEndpoints,
    multiCluster: multiCluster === true || multiCluster === "true",
    variant,
    encoding,
    ...(scalar(fields.team) === "" ? {} : { team: scalar(fields.team) }),
  };
}

/** The platform prepends `http://` to an endpoint without a scheme. */
function withScheme(url: string, key: string): string {
  const full = /^[a-z][a-z0-9+.-]*:\/\//i.test(url) ? url : `http://${url}`;
  try {
    const parsed = new URL(full);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw badRequest(`Invalid ${key} "${url.slice(0, 100)}": give the provider's http:// or https:// address.`);
  }
  return full.replace(/\/+$/, "");
}
