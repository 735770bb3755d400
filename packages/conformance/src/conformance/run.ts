/**
 * `runConformance`: plays the platform against one provider and reports every check.
 * Whatever happens (a failed check, an exception, an abort) the instances the run created
 * are destroyed before it returns.
 */
import { randomBytes } from "node:crypto";
import { KIT_POOLS, platformCalls, runNames } from "./calls.js";
import { PlatformClient } from "provider-kit/contract";
import { Ledger } from "./ledger.js";
import { Recorder } from "./recorder.js";
import { Removals } from "./removals.js";
import { ConformanceUsageError } from "./usage.js";
import { Interrupted, runScenario, type ScenarioContext } from "./scenario.js";
import {
  CHECK_GROUPS,
  ENCODINGS,
  VARIANTS,
  type ConformanceOptions,
  type ConformanceReport,
  type Variant,
} from "./types.js";
import { ACTION_METHODS, ACTION_NAME_PATTERN, INSTANCE_NAME_PATTERN, POOL_NAME_PATTERN, type Placement } from "provider-kit/contract";

/** Up to five destroys per instance left at the end, backing off: a provider may be busy for a moment. */
const DEFAULT_CLEANUP_RETRY_DELAYS_MS: readonly number[] = [500, 1000, 2000, 4000];

export { ConformanceUsageError };

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  validate(options);
  const started = Date.now();
  const variant = options.variant ?? "current";
  const encoding = options.encoding ?? "form";
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  // Long on purpose: the second instance adds "-2", so a provider cutting names short sees them clash.
  const names = runNames(options.instance ?? `pkc-${randomId()}-conformance`, `pkc-missing-${randomId()}`);
  const client = new PlatformClient({
    url: options.url,
    username: options.username,
    password: options.password,
    encoding,
    requestIdHeader: options.requestIdHeader ?? "X-Request-ID",
    timeoutMs: requestTimeoutMs,
  });
  const recorder = new Recorder(variant, options.groups, options.onProgress);
  const team = options.team ?? "pkc-team";
  const callsFor = (plan: string | undefined, placement?: Placement) => platformCalls(names, variant, { plan, team, placement });
  const ledger = new Ledger();
  const scenario: ScenarioContext = {
    client,
    recorder,
    variant,
    names,
    callsFor,
    plan: options.plan,
    multiCluster: options.multiCluster ?? false,
    pools: options.pools ?? KIT_POOLS,
    provisionTimeoutMs: options.provisionTimeoutMs ?? 120_000,
    pollIntervalMs: options.pollIntervalMs ?? 500,
    signal: options.signal,
    onProgress: options.onProgress,
    removals: new Removals(client, ledger, options.cleanupRetryDelaysMs ?? DEFAULT_CLEANUP_RETRY_DELAYS_MS, options.onProgress),
    jsonAnswers: [],
    manifest: options.manifest,
  };

  let interrupted = false;
  try {
    await runScenario(scenario);
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error;
    interrupted = true;
  } finally {
    await ledger.removeAll();
  }

  const { results, counts } = recorder.finish(interrupted ? "the run was interrupted before this check" : "not reached");
  return {
    url: client.url,
    variant,
    encoding,
    instance: names.instance,
    passed: counts.fail === 0 && !interrupted,
    counts,
    results,
    notes: notesOn(options, variant),
    leftovers: ledger.leftovers,
    interrupted,
    durationMs: Date.now() - started,
  };
}

/** Options the run could not honour as given, said in the report rather than silently dropped. */
function notesOn(options: ConformanceOptions, variant: Variant): string[] {
  const notes: string[] = [];
  if (variant === "B" && options.plan !== undefined) {
    notes.push(`The plan "${options.plan}" was not sent: Variant B creates instances with the name only.`);
  }
  if (variant !== "current" && (options.multiCluster || options.pools !== undefined)) {
    notes.push(`No plans were asked per pool: multi-cluster services are today's platform's (variant current), not Variant ${variant}'s.`);
  }
  return notes;
}

function validate(options: ConformanceOptions): void {
  const fail = (message: string): never => {
    throw new ConformanceUsageError(message);
  };
  let url: URL | undefined;
  try {
    url = new URL(options.url);
  } catch {
    fail(`"${options.url}" is not a URL: give the provider's base URL, e.g. http://127.0.0.1:8080`);
  }
  if (url && url.protocol !== "http:" && url.protocol !== "https:") fail(`The provider URL must be http or https, not ${url.protocol}`);
  if (options.variant && !VARIANTS.includes(options.variant)) fail(`Unknown variant "${options.variant}": use one of ${VARIANTS.join(", ")}.`);
  if (options.encoding && !ENCODINGS.includes(options.encoding)) fail(`Unknown encoding "${options.encoding}": use one of ${ENCODINGS.join(", ")}.`);
  for (const group of options.groups ?? []) {
    if (!CHECK_GROUPS.includes(group)) fail(`Unknown check group "${group}": use some of ${CHECK_GROUPS.join(", ")}.`);
  }
  if (options.instance !== undefined && !INSTANCE_NAME_PATTERN.test(options.instance)) {
    fail(`Instance name "${options.instance}" is not one the platform would send: it must match ${INSTANCE_NAME_PATTERN.source}.`);
  }
  for (const [name, value] of Object.entries({
    provisionTimeoutMs: options.provisionTimeoutMs,
    pollIntervalMs: options.pollIntervalMs,
    requestTimeoutMs: options.requestTimeoutMs,
  })) {
    if (value !== undefined && !(Number.isFinite(value) && value > 0)) fail(`${name} must be a positive number of milliseconds.`);
  }
  if (options.manifest !== undefined) manifestProblems(options.manifest).forEach(fail);
  if (options.pools !== undefined) poolProblems(options.pools).forEach(fail);
  if (options.cleanupRetryDelaysMs !== undefined && !options.cleanupRetryDelaysMs.every((delay) => Number.isFinite(delay) && delay >= 0)) {
    fail("cleanupRetryDelaysMs must be a list of delays in milliseconds, each 0 or more (e.g. [500, 1000]; [] tries once).");
  }
}

/** What makes a list of pools one the platform could not name. */
function poolProblems(pools: readonly string[]): string[] {
  if (pools.length === 0) return ["Give at least one pool (--pool <name>), or none at all for the kit's two."];
  const invalid = pools.filter((pool) => !POOL_NAME_PATTERN.test(pool));
  if (invalid.length > 0) {
    return invalid.map((pool) => `Pool name "${pool}" is not one the platform accepts: lower-case letters, digits and "-", a letter first, at most 40 (${POOL_NAME_PATTERN.source}).`);
  }
  const repeated = pools.filter((pool, index) => pools.indexOf(pool) !== index);
  return repeated.length > 0 ? [`Pool "${repeated[0]}" is given twice: name each pool once.`] : [];
}

/** A path under the instance: literal segments and `{name}` parameters. */
const OPERATION_PATH = /^(\/([A-Za-z0-9._~-]+|\{[A-Za-z_][A-Za-z0-9_]*\}))+$/;

/** What makes a manifest one the platform would not take, operation by operation. */
function manifestProblems(manifest: unknown): string[] {
  const operations = (manifest as { operations?: unknown } | null)?.operations;
  if (!Array.isArray(operations)) {
    return ['The manifest has no "operations" list: give the JSON `provider-kit manifest --actions` writes (or actionsManifest(actions)).'];
  }
  return operations.flatMap((operation: { method?: unknown; path?: unknown; action?: unknown } | null, index) => {
    const { method, path, action } = operation ?? {};
    const which = `The manifest's operation ${index + 1}`;
    if (!ACTION_METHODS.includes(method as (typeof ACTION_METHODS)[number])) return [`${which} has method ${JSON.stringify(method)}: use one of ${ACTION_METHODS.join(", ")}.`];
    if (typeof path !== "string" || !OPERATION_PATH.test(path)) return [`${which} has path ${JSON.stringify(path)}: give a path under the instance, such as /users/{user}/keys.`];
    if (typeof action !== "string" || !ACTION_NAME_PATTERN.test(action)) return [`${which} has action ${JSON.stringify(action)}: names are lower-case words, digits and "-", dot-separated.`];
    return [];
  });
}

function randomId(): string {
  return randomBytes(5).toString("hex");
}
