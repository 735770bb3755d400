/**
 * `provider-kit check`: runs the conformance kit against a provider and prints the report.
 * Exit codes (exit-codes.ts): 2 also when the provider is unreachable, refuses the credentials
 * or the report file cannot be written; 130/143 after removing the instance.
 */
import { readFile, writeFile } from "node:fs/promises";
import { Command, InvalidArgumentError, Option } from "commander";
import { actionsManifest } from "provider-kit";
import {
  CHECK_GROUPS,
  ConformanceUsageError,
  CredentialsRefusedError,
  ENCODINGS,
  formatCheckTable,
  formatJson,
  formatJunit,
  formatTree,
  OSB_CHECK_GROUPS,
  OSB_CHECKS,
  ProviderUnreachableError,
  runConformance,
  runOsbConformance,
  VARIANTS,
  type ActionsManifest,
  type CheckGroup,
  type ConformanceReport,
  type OsbCheckGroup,
  type Encoding,
  type ProgressEvent,
  type Variant,
} from "../conformance/index.js";
import { colorOn, EXIT, loadActions, SIGNAL_EXIT } from "provider-kit/cli";
import { printable } from "provider-kit/contract";

const FORMATS = ["tree", "json", "junit"] as const;
type Format = (typeof FORMATS)[number];
const FORMATTERS: Record<Format, (report: ConformanceReport, verbose: boolean) => string> = {
  tree: (report, verbose) => formatTree(report, { verbose }),
  json: formatJson,
  junit: formatJunit,
};

interface CheckOptions {
  url?: string;
  username?: string;
  password?: string;
  variant: Variant;
  encoding: Encoding;
  plan?: string;
  team?: string;
  timeout: number;
  requestTimeout: number;
  groups?: CheckGroup[];
  format: Format;
  output?: string;
  requestIdHeader?: string;
  listChecks?: boolean;
  verbose?: boolean;
  cleanupRetries?: number[];
  manifest?: string;
  actions?: string;
  export: string;
  multiCluster?: boolean;
  pool?: string[];
  osb?: boolean;
}

/** The native check's options that mean nothing to a broker. */
const NATIVE_ONLY = ["variant", "encoding", "plan", "team", "manifest", "actions", "multiCluster", "pool", "requestIdHeader", "cleanupRetries"] as const;


/** Adds `provider-kit check` to the CLI. */
export function registerCheck(program: Command): void {
  program
    .command("check")
    .description("play the platform against a running provider and report, check by check, where it differs from the contract")
    .option("--osb", "check the URL as an Open Service Broker (API v2.17, the broker's side): catalog, provision, last_operation, bindings, updates, deprovision, errors")
    .option("--url <url>", "base URL of the provider, e.g. http://127.0.0.1:8080 (a bare host:port means http://)", providerUrl)
    .option("--username <name>", "Basic auth user name (the service manifest's username, or the service id)")
    .addOption(new Option("--password <password>", "Basic auth password (the manifest's password)").env("PROVIDER_KIT_PASSWORD"))
    .addOption(new Option("--variant <variant>", "which platform to play").choices(VARIANTS).default("current"))
    .addOption(new Option("--encoding <encoding>", "request body encoding").choices(ENCODINGS).default("form"))
    .option("--plan <name>", "plan to create the instance with (default: the first plan listed)")
    .option("--team <name>", "team sent on create and update (default: pkc-team)")
    .option("--timeout <seconds>", "how long to wait for the instance to become ready", seconds, 120)
    .option("--request-timeout <seconds>", "how long to wait for the answer to one call before it counts as unanswered (the platform waits 300)", seconds, 30)
    .option("--groups <list>", `comma-separated groups of checks to run: ${CHECK_GROUPS.join(", ")}; with --osb: ${OSB_CHECK_GROUPS.join(", ")}`, groups)
    .addOption(new Option("--format <format>", "report format").choices(FORMATS).default("tree"))
    .option("--output <file>", "write the report to this file (the tree still goes to the terminal)")
    .option("--request-id-header <name>", "request id header the platform is configured with (default: X-Request-ID)")
    .option(
      "--cleanup-retries <seconds>",
      "comma-separated waits, in seconds, before each retry of a destroy that failed at cleanup; 'none' tries once (default: 0.5,1,2,4)",
      retryDelays,
    )
    .option("--manifest <file>", "the service's manifest of its custom actions (JSON, as `provider-kit manifest --actions` writes it): check each operation")
    .option("--actions <module>", "instead of --manifest, the provider's own module exporting declareActions(...) (.ts through the project's tsx, or .js): check each operation it declares")
    .option("--export <name>", "with --actions, the module's export holding the declarations", "actions")
    .option("--multi-cluster", "check the provider as a multi-cluster service (plans per pool, instances in a pool) even when its plans answer without a pool")
    .option("--pool <name>", "a pool to ask a multi-cluster provider's plans for; repeat it for more; the instances live in the first (default: pkc-pool-a and pkc-pool-b)", collect)
    .option("--verbose", "show every exchange of every failure and warning in the tree (default: the first, briefly)")
    .option("--list-checks", "print every check (id, level, rule) as a Markdown table and exit")
    .action(async (options: CheckOptions, command: Command) => {
      if (options.listChecks) {
        process.stdout.write(options.osb ? formatCheckTable(OSB_CHECKS) : formatCheckTable());
        return;
      }
      const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: EXIT.usage, code: "provider-kit.usage" });
      const { url, username, password } = options;
      if (!url || !username || password === undefined) {
        return usage("--url, --username and --password (or PROVIDER_KIT_PASSWORD) are required");
      }
      const osbGroups = (options.groups ?? []).filter((group) => isOsbGroup(group));
      if (options.osb) {
        const given = NATIVE_ONLY.filter((name) => command.getOptionValueSource(name) === "cli" || command.getOptionValueSource(name) === "env");
        if (given.length > 0) return usage(`--osb checks a broker: ${given.map(flag).join(", ")} ${given.length > 1 ? "apply" : "applies"} to the native check only; leave ${given.length > 1 ? "them" : "it"} out.`);
        if (osbGroups.length !== (options.groups ?? []).length) return usage(`with --osb the groups are ${OSB_CHECK_GROUPS.join(", ")}.`);
      } else if (osbGroups.length > 0) {
        return usage(`the groups ${osbGroups.join(", ")} check a broker: add --osb.`);
      }
      process.exitCode = await check({ ...options, url, username, password }, usage);
    });
}

async function check(
  options: CheckOptions & { url: string; username: string; password: string },
  usage: (message: string) => never,
): Promise<number> {
  const controller = new AbortController();
  let stoppedBy: string | undefined;
  const stop = (signal: NodeJS.Signals) => {
    stoppedBy = signal;
    process.stderr.write(`\n${signal}: stopping; removing the instance first (send it again to quit at once)...\n`);
    controller.abort();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);

  const manifest = options.osb ? undefined : await manifestOf(options, usage);
  // The destroys' lines are for a reader: on a terminal, or beside the tree report.
  const onProgress = progress({ destroys: process.stderr.isTTY === true || options.format === "tree" || options.output !== undefined });
  let report: ConformanceReport;
  try {
    report = options.osb
      ? await runOsbConformance({
          url: options.url,
          username: options.username,
          password: options.password,
          provisionTimeoutMs: options.timeout * 1000,
          requestTimeoutMs: options.requestTimeout * 1000,
          groups: options.groups?.filter(isOsbGroup),
          signal: controller.signal,
          onProgress,
        })
      : await runConformance({
      manifest,
      url: options.url,
      username: options.username,
      password: options.password,
      variant: options.variant,
      encoding: options.encoding,
      plan: options.plan,
      team: options.team,
      provisionTimeoutMs: options.timeout * 1000,
      requestTimeoutMs: options.requestTimeout * 1000,
      groups: options.groups,
      requestIdHeader: options.requestIdHeader,
      cleanupRetryDelaysMs: options.cleanupRetries,
      multiCluster: options.multiCluster,
      pools: options.pool,
      signal: controller.signal,
      onProgress,
    });
  } catch (error) {
    if (error instanceof ConformanceUsageError) return usage(error.message);
    if (error instanceof ProviderUnreachableError || error instanceof CredentialsRefusedError) {
      process.stderr.write(`error: ${error.message}\n`);
      return EXIT.usage;
    }
    process.stderr.write(`error: the conformance kit itself failed; please report this:\n${(error as Error).stack}\n`);
    return EXIT.broken;
  } finally {
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
  }

  const verbose = options.verbose === true;
  const forTerminal = formatTree(report, { color: colorOn(process.stdout), verbose });
  if (!options.output) {
    process.stdout.write(options.format === "tree" ? forTerminal : FORMATTERS[options.format](report, verbose));
  } else {
    // The tree first: a report file that cannot be written must not cost the run's results.
    process.stdout.write(forTerminal);
    try {
      await writeFile(options.output, FORMATTERS[options.format](report, verbose));
      process.stderr.write(`Report written to ${options.output}\n`);
    } catch (error) {
      process.stderr.write(`error: cannot write the report to ${options.output}: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
  }
  if (stoppedBy) return SIGNAL_EXIT[stoppedBy] ?? EXIT.failed;
  return report.passed ? EXIT.ok : EXIT.failed;
}

/**
 * Progress on stderr: the wait for provisioning (one line, rewritten on a terminal), cleanup, and
 * with `destroys` each destroy attempt and retry wait (a provider may take many seconds to answer one).
 */
function progress({ destroys }: { destroys: boolean }): (event: ProgressEvent) => void {
  const terminal = process.stderr.isTTY === true;
  let printedAt = -Infinity;
  let lineOpen = false;
  return (event) => {
    if (event.type === "waiting") {
      const line = `waiting for ${event.instance} to be ready: 202 (pending) after ${Math.round(event.elapsedMs / 1000)} s, timeout ${Math.round(event.timeoutMs / 1000)} s`;
      if (terminal) {
        process.stderr.write(`\r${line}`);
        lineOpen = true;
      } else if (event.elapsedMs - printedAt >= 5000) {
        process.stderr.write(`${line}\n`);
        printedAt = event.elapsedMs;
      }
      return;
    }
    if (!destroys && (event.type === "destroying" || event.type === "retrying")) return;
    if (lineOpen) process.stderr.write("\n");
    lineOpen = false;
    if (event.type === "destroying") {
      const attempt = event.attempt ? ` (cleanup, attempt ${event.attempt.number} of ${event.attempt.of})` : "";
      process.stderr.write(`destroying ${event.instance}${attempt}...\n`);
    }
    if (event.type === "retrying") {
      process.stderr.write(`could not destroy ${event.instance} yet (${printable(event.reason, { oneLine: true })}): trying again in ${event.delayMs / 1000} s\n`);
    }
    if (event.type === "cleanup") {
      // The report names what is left over, with what to do.
      process.stderr.write(event.removed ? `removed ${event.instance}\n` : `could not remove ${event.instance}: ${printable(event.reason ?? "no reason given", { oneLine: true })}\n`);
    }
  };
}

/** A host (name, IPv4 or bracketed IPv6) and port with no scheme, e.g. `localhost:8080`, `[::1]:8080/base`. */
const BARE_HOST_PORT = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):\d+(?:\/.*)?$/;

/** The provider's base URL as given, with http:// before a bare host:port. */
function providerUrl(value: string): string {
  return BARE_HOST_PORT.test(value) ? `http://${value}` : value;
}

function seconds(value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0) throw new InvalidArgumentError("give a positive number of seconds.");
  return parsed;
}

/** `0.5,1,2` → [500, 1000, 2000] ms; `none` → [] (one attempt). */
function retryDelays(value: string): number[] {
  if (value.trim() === "none") return [];
  const delays = value.split(",").map((item) => Number(item.trim()));
  if (delays.length === 0 || !delays.every((delay) => Number.isFinite(delay) && delay >= 0)) {
    throw new InvalidArgumentError("give comma-separated seconds, each 0 or more (e.g. 0.5,1,2), or 'none' for a single attempt.");
  }
  return delays.map((delay) => delay * 1000);
}

/** A repeatable option: each use adds one value. */
function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Native and OSB groups both parse: the action tells which set applies once it knows whether --osb was given. */
function groups(value: string): CheckGroup[] {
  const list = value.split(",").map((item) => item.trim()).filter(Boolean);
  const unknown = list.filter((item) => !CHECK_GROUPS.includes(item as CheckGroup) && !isOsbGroup(item));
  if (unknown.length > 0 || list.length === 0) {
    throw new InvalidArgumentError(`unknown group ${unknown.join(", ") || "(none given)"}; groups are ${CHECK_GROUPS.join(", ")} (with --osb: ${OSB_CHECK_GROUPS.join(", ")}).`);
  }
  return list as CheckGroup[];
}

function isOsbGroup(group: string): group is OsbCheckGroup {
  return OSB_CHECK_GROUPS.includes(group as OsbCheckGroup);
}

/** `multiCluster` → `--multi-cluster`. */
function flag(option: string): string {
  return `--${option.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** The operations to check: from the manifest file, or from the provider's own declarations. */
async function manifestOf(options: CheckOptions, usage: (message: string) => never): Promise<ActionsManifest | undefined> {
  if (options.manifest !== undefined && options.actions !== undefined) {
    return usage("--manifest and --actions both give the operations to check: give one.");
  }
  if (options.manifest !== undefined) return readManifest(options.manifest, usage);
  if (options.actions === undefined) return undefined;
  try {
    return actionsManifest(await loadActions(options.actions, options.export));
  } catch (error) {
    return usage(`cannot read the actions of ${options.actions}: ${(error as Error).message}`);
  }
}

/** The manifest file as JSON; runConformance says what is wrong with its content. */
async function readManifest(file: string, usage: (message: string) => never): Promise<ActionsManifest> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return usage(`cannot read the manifest ${file}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as ActionsManifest;
  } catch (error) {
    return usage(`the manifest ${file} is not JSON (${(error as Error).message}): write it with provider-kit manifest --actions <module>`);
  }
}
