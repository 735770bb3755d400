/**
 * zod schemas of every request, built once at load. Each takes the canonical fields
 * (see `src/http/fields.ts`: camelCase keys, list fields as arrays, empty text left out) plus the
 * path segments (`instance`, `job`, `host`) and outputs the typed request a handler receives.
 * Error messages are predicates ("is required.") so the HTTP layer can prefix the field name as
 * the caller spelled it.
 */
import { z } from "zod";
import type {
  BindAppRequest,
  BindJobRequest,
  BindUnitRequest,
  CreateRequest,
  DestroyRequest,
  InstanceRequest,
  Parameters,
  UnbindAppRequest,
  UnbindJobRequest,
  UpdateRequest,
} from "./types.js";
import { INSTANCE_NAME_PATTERN, NAME_MAX_LENGTH, NAME_PATTERN, RESERVED_INSTANCE_NAMES, type Placement } from "./contract.js";

const NAME_RULE = `must start with a letter and hold only letters, digits, "-" and "_", at most ${NAME_MAX_LENGTH} characters.`;
const INSTANCE_NAME_RULE = `must start with a letter, then hold at least one more letter, digit, "-" or "_", at most ${NAME_MAX_LENGTH} characters.`;

function text(what = "text") {
  return z.string({
    error: (issue) => (issue.input === undefined ? "is required." : `must be given once, as ${what}.`),
  });
}

const name = () => text().regex(NAME_PATTERN, NAME_RULE).max(NAME_MAX_LENGTH, NAME_RULE);
const instanceName = () => text().regex(INSTANCE_NAME_PATTERN, INSTANCE_NAME_RULE).max(NAME_MAX_LENGTH, INSTANCE_NAME_RULE);

/** Hosts the platform sends in bodies (`app-host`, `unit-host`): opaque, but one printable token. */
const host = () =>
  text()
    .min(1, "is empty.")
    .max(1024, "is longer than 1024 characters.")
    // eslint-disable-next-line no-control-regex -- the control characters are what it refuses
    .regex(/^[^\s\x00-\x1f\x7f]+$/, "must not contain spaces or control characters.");

/** A host in the path (Variant B unbind): a host name or address, optionally with a port. */
const pathHost = () =>
  text()
    .max(255, "is longer than 255 characters.")
    .regex(/^[A-Za-z0-9[](?:[-A-Za-z0-9_.:[\]]*[A-Za-z0-9\]])?$/, "must be a host name or address.")
    .refine((value) => !value.includes(".."), "must be a host name or address.");

/** Absent list fields are empty lists (a fresh array per call: handlers may keep or change it). */
const list = (item: z.ZodType<string> = text()) =>
  z.array(item, { error: "must be text, or repeated for several values." }).default(() => []);

function isParameters(value: unknown): value is Parameters {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (item) =>
      typeof item === "string" ||
      (Array.isArray(item) && item.every((element) => typeof element === "string")) ||
      isParameters(item),
  );
}

/** Text values, lists of text, and nested groups: `parameters.tls.enabled=true` → `{ tls: { enabled: "true" } }`. */
export const parametersSchema = z.custom<Parameters>(isParameters, { error: "must be a group of named values." });
const parameters = () => parametersSchema.default(() => ({}));

const placementFields = {
  poolName: text().optional(),
  poolProvisioner: text().optional(),
  clusterName: text().optional(),
  clusterProvisioner: text().optional(),
  clusterAddresses: list(),
};

type PlacementFields = Partial<Omit<Placement, "clusterAddresses">> & Pick<Placement, "clusterAddresses">;

function placement(fields: PlacementFields): Placement {
  return {
    poolName: fields.poolName,
    poolProvisioner: fields.poolProvisioner,
    clusterName: fields.clusterName,
    clusterProvisioner: fields.clusterProvisioner,
    clusterAddresses: fields.clusterAddresses,
  };
}

const instanceFields = {
  plan: text().optional(),
  team: text().optional(),
  tags: list(),
  description: text().optional(),
  parameters: parameters(),
};

export const createSchema = z
  .object({
    name: instanceName().refine((value) => !RESERVED_INSTANCE_NAMES.has(value), "must not be \"plans\": that name is reserved (it would shadow GET /resources/plans); choose another."),
    ...instanceFields,
  })
  .transform(({ name, ...rest }) => ({ instance: name, ...rest })) satisfies z.ZodType<CreateRequest>;

export const updateSchema = z.object({ instance: instanceName(), ...instanceFields }) satisfies z.ZodType<UpdateRequest>;

export const instanceSchema = z.object({ instance: instanceName() }) satisfies z.ZodType<InstanceRequest>;
/**
 * A destroy names only the instance.
 * @alias instanceSchema
 */
export const destroySchema: z.ZodType<DestroyRequest> = instanceSchema;

/** `app-host` is the first of `app-hosts`; older platforms send only `app-host`. */
function hosts(appHost: string | undefined, appHosts: string[]): { appHost?: string; appHosts: string[] } {
  return { appHost: appHost ?? appHosts[0], appHosts: appHosts.length > 0 || appHost === undefined ? appHosts : [appHost] };
}

export const bindAppSchema = z
  .object({
    instance: instanceName(),
    appName: name().optional(),
    appHost: host().optional(),
    appHosts: list(host()),
    appInternalHosts: list(host()),
    parameters: parameters(),
    ...placementFields,
  })
  .transform((input) => ({
    instance: input.instance,
    appName: input.appName,
    ...hosts(input.appHost, input.appHosts),
    appInternalHosts: input.appInternalHosts,
    parameters: input.parameters,
    placement: placement(input),
  })) satisfies z.ZodType<BindAppRequest>;

export const unbindAppSchema = z
  .object({
    instance: instanceName(),
    appName: name().optional(),
    appHost: host().optional(),
    appHosts: list(host()),
    ...placementFields,
  })
  .transform((input) => ({
    instance: input.instance,
    appName: input.appName,
    ...hosts(input.appHost, input.appHosts),
    placement: placement(input),
  })) satisfies z.ZodType<UnbindAppRequest>;

/** Variant B bind: `POST /resources/:name` with `hostname`; the app is known by that host alone. */
export const bindHostnameSchema = z
  .object({ instance: instanceName(), hostname: host(), parameters: parameters(), ...placementFields })
  .transform((input) => ({
    instance: input.instance,
    appHost: input.hostname,
    appHosts: [input.hostname],
    appInternalHosts: [],
    parameters: input.parameters,
    placement: placement(input),
  })) satisfies z.ZodType<BindAppRequest>;

/** Variant B unbind: `DELETE /resources/:name/hostname/:host`. */
export const unbindHostnameSchema = z
  .object({ instance: instanceName(), host: pathHost(), ...placementFields })
  .transform((input) => ({
    instance: input.instance,
    appHost: input.host,
    appHosts: [input.host],
    placement: placement(input),
  })) satisfies z.ZodType<UnbindAppRequest>;

export const bindUnitSchema = z.object({
  instance: instanceName(),
  appName: name().optional(),
  appHost: host().optional(),
  unitHost: host(),
}) satisfies z.ZodType<BindUnitRequest>;

/**
 * An unbind of a unit carries what its bind carried.
 * @alias bindUnitSchema
 */
export const unbindUnitSchema = bindUnitSchema;

/** The job comes from the path (`/binds/jobs/:job`); a `job-name` in the body is ignored. */
export const bindJobSchema = z
  .object({ instance: instanceName(), job: name(), parameters: parameters(), ...placementFields })
  .transform((input) => ({
    instance: input.instance,
    jobName: input.job,
    parameters: input.parameters,
    placement: placement(input),
  })) satisfies z.ZodType<BindJobRequest>;

export const unbindJobSchema = z
  .object({ instance: instanceName(), job: name(), ...placementFields })
  .transform((input) => ({
    instance: input.instance,
    jobName: input.job,
    placement: placement(input),
  })) satisfies z.ZodType<UnbindJobRequest>;
