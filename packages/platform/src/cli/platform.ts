/**
 * `provider-kit platform`: a local platform serving the management API and driving real
 * providers exactly as the platform does. The admin comes from PLATFORM_ADMIN_EMAIL and
 * PLATFORM_ADMIN_PASSWORD (or --admin-password-file); state lives in an embedded redis-server
 * under --data-dir (default), the Redis of --redis-url (or PLATFORM_REDIS_URL, or
 * --redis-url-file), or memory (--memory). Secrets have ways in that `ps` does not show.
 * Exit codes: 0 stopped by a signal; 2 bad usage or configuration; 1 the platform failed to start.
 */
import { readFile } from "node:fs/promises";
import { text } from "node:stream/consumers";
import { Command, InvalidArgumentError } from "commander";
import { parseCluster, parsePool, type Cluster, type Pool } from "../platform/domain/config.js";
import { startPlatform, type PlatformOptions } from "../platform/platform.js";
import { onParentExit } from "../redis/process.js";
import { EXIT, ownPackage } from "provider-kit/cli";
import { parsePort, printable } from "./common.js";

export { registerDev } from "./dev.js";

interface PlatformFlags {
  port: number;
  host: string;
  dataDir: string;
  redisUrl?: string;
  redisUrlFile?: string;
  adminPasswordFile?: string;
  memory?: boolean;
  seed?: string;
  allowRun?: boolean;
  openSignup?: boolean;
  allowedHost: string[];
  pool: Pool[];
  cluster: Cluster[];
  platform: string[];
  quota?: number;
  apiVariant: 1 | 2;
}

function parseQuota(value: string): number {
  const quota = Number(value);
  if (!Number.isInteger(quota) || quota < -1) throw new InvalidArgumentError("give a whole number of apps, or -1 for unlimited.");
  return quota;
}

function parseApiVariant(value: string): 1 | 2 {
  if (value !== "1" && value !== "2") throw new InvalidArgumentError("give 1 or 2.");
  return Number(value) as 1 | 2;
}

/** A repeatable flag's values, each parsed; a bad one is a usage error naming what to give. */
const repeated =
  <T>(parse: (text: string) => T) =>
  (value: string, values: T[]): T[] => {
    try {
      return [...values, parse(value)];
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
  };

function addHost(value: string, hosts: string[]): string[] {
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)$/i.test(value)) {
    throw new InvalidArgumentError("give a host name or address as a browser sends it, without a port (e.g. dev.example.test or [fd00::1]).");
  }
  return [...hosts, value];
}

function addPlatform(value: string, platforms: string[]): string[] {
  if (!/^[a-z][a-z0-9._-]{0,39}$/.test(value)) throw new InvalidArgumentError("give a platform name: lower-case letters, digits, dots, dashes.");
  return [...platforms, value];
}

export function registerPlatform(program: Command): void {
  program
    .command("platform")
    .description("run a local platform: the management API (users, teams, services, instances, apps, binds) driving real providers")
    .option("--port <port>", "port to listen on (0: any free port)", parsePort, 8000)
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--data-dir <dir>", "where the embedded redis-server keeps the platform's state", ".provider-kit-platform")
    .option("--redis-url <url>", "keep state in this Redis instead of an embedded one (redis://[user:password@]host:port); any local user sees it in ps: with a password, use PLATFORM_REDIS_URL or --redis-url-file")
    .option("--redis-url-file <file>", "read --redis-url's URL from this file's first line")
    .option("--admin-password-file <file>", "read the admin's password from this file's first line (-: standard input) instead of PLATFORM_ADMIN_PASSWORD, so it is not in the process's environment")
    .option("--memory", "keep state in memory: everything is lost when the platform stops")
    .option("--seed <file.yaml>", "users, teams, services, apps, instances and bindings to create at start-up (skipped when they exist)")
    .option("--allow-run", "serve POST /apps/<app>/run: the members of an app's teams run commands on this machine as your OS user")
    .option("--open-signup", "let anyone who reaches the port sign up (POST /users); by default only the admin creates users")
    .option("--allowed-host <name>", "a host name to answer for beyond the listen address, localhost, 127.0.0.1 and [::1] (repeat it)", addHost, [])
    .option("--pool <name[=team,...]>", "a pool apps and multi-cluster instances run in, for every team or only those listed (repeat it; the first is the default; default: local)", repeated(parsePool), [])
    .option("--cluster <name[=pool,...]>", "a cluster serving those pools, or every pool no other cluster names (repeat it; default: local, serving every pool)", repeated(parseCluster), [])
    .option("--platform <name>", "a platform apps may use (repeat it; default: go, java, node, php, python, ruby, static)", addPlatform, [])
    .option("--quota <apps>", "how many apps each user may own (-1: unlimited)", parseQuota)
    .option("--api-variant <1|2>", "the spec variant whose shapes are served where the two differ (deploys, the app's Pool)", parseApiVariant, 1)
    .addHelpText(
      "after",
      [
        "",
        "Environment:",
        "  PLATFORM_ADMIN_EMAIL      the admin user the platform creates on first start (required)",
        "  PLATFORM_ADMIN_PASSWORD   its password, 6 to 50 characters (or --admin-password-file)",
        "  PLATFORM_REDIS_URL        as --redis-url, out of sight of ps",
        "Each is removed from the environment once read: nothing the platform starts inherits it.",
      ].join("\n"),
    )
    .action(async (flags: PlatformFlags, command: Command) => {
      const usage = (message: string): never => command.error(`error: ${message}`, { exitCode: EXIT.usage, code: "provider-kit.usage" });
      const { PLATFORM_ADMIN_EMAIL: email, PLATFORM_ADMIN_PASSWORD: passwordVariable, PLATFORM_REDIS_URL: redisUrlVariable } = process.env;
      // Read once: nothing started later (run's commands, redis-server) inherits them.
      delete process.env.PLATFORM_ADMIN_EMAIL;
      delete process.env.PLATFORM_ADMIN_PASSWORD;
      delete process.env.PLATFORM_REDIS_URL;
      if (passwordVariable && flags.adminPasswordFile) usage("PLATFORM_ADMIN_PASSWORD and --admin-password-file both give the admin's password: give one.");
      const password = flags.adminPasswordFile ? await secretFrom(flags.adminPasswordFile, "--admin-password-file", usage) : passwordVariable;
      if (!email || !password) {
        usage("set PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD (6 to 50 characters; or give the password with --admin-password-file): the admin user the platform creates on first start.");
      }
      const redisUrls = [
        ["--redis-url", flags.redisUrl],
        ["PLATFORM_REDIS_URL", redisUrlVariable],
        ["--redis-url-file", flags.redisUrlFile],
      ].filter(([, given]) => given) as Array<[string, string]>;
      if (redisUrls.length > 1) usage(`${redisUrls.map(([name]) => name).join(" and ")} all give the Redis URL: give one.`);
      const redisUrl = flags.redisUrlFile ? await secretFrom(flags.redisUrlFile, "--redis-url-file", usage) : (flags.redisUrl ?? (redisUrlVariable || undefined));
      if (flags.memory && redisUrl) usage("--memory and the Redis URL both say where state lives: give one.");
      if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) usage("the Redis URL must look like redis://[user:password@]host:port.");
      await run({ ...flags, redisUrl }, { email: email!, password: password! });
    });
}

/** A secret's first line, from a file or (`-`) standard input; what is wrong with it never shows the secret. */
async function secretFrom(file: string, flag: string, usage: (message: string) => never): Promise<string> {
  let content: string;
  try {
    content = file === "-" ? await text(process.stdin) : await readFile(file, "utf8");
  } catch (error) {
    return usage(`${flag}: cannot read ${file === "-" ? "standard input" : file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
  const secret = content.split(/\r?\n/, 1)[0]!;
  if (secret === "") usage(`${flag}: ${file === "-" ? "standard input" : file} has nothing on its first line.`);
  return secret;
}

async function run(flags: PlatformFlags, admin: PlatformOptions["admin"]): Promise<void> {
  const state: PlatformOptions["state"] = flags.memory
    ? { kind: "memory" }
    : flags.redisUrl
      ? { kind: "redis", url: flags.redisUrl }
      : { kind: "embedded", dataDir: flags.dataDir, redisServer: process.env.REDIS_SERVER };
  let platform;
  try {
    platform = await startPlatform({
      port: flags.port,
      host: flags.host,
      admin,
      state,
      seedFile: flags.seed,
      allowRun: flags.allowRun,
      openSignup: flags.openSignup,
      allowedHosts: flags.allowedHost,
      config: {
        ...(flags.pool.length > 0 ? { pools: flags.pool } : {}),
        ...(flags.cluster.length > 0 ? { clusters: flags.cluster } : {}),
        ...(flags.platform.length > 0 ? { platforms: flags.platform } : {}),
        ...(flags.quota !== undefined ? { defaultQuota: flags.quota } : {}),
        apiVariant: flags.apiVariant,
      },
      say: (line) => process.stdout.write(`${printable(line)}\n`),
      version: ownPackage().pkg.version,
      providerCalls: { print: (line) => process.stdout.write(`${printable(line)}\n`) },
      report: (error) => process.stderr.write(`platform error: ${(error as Error)?.stack ?? String(error)}\n`),
    });
  } catch (error) {
    process.stderr.write(`error: the platform could not start: ${(error as Error).message}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const where = state.kind === "memory" ? "in memory (lost at exit)" : state.kind === "redis" ? `in ${redacted(state.url)}` : `in ${state.dataDir}`;
  process.stdout.write(
    [
      `provider-kit platform listening on ${platform.url} (state ${where})`,
      `Log in:  curl -s -X POST ${platform.url}/users/${admin.email}/tokens -H 'Content-Type: application/json' -d '{"password":"'"$PLATFORM_ADMIN_PASSWORD"'"}'`,
      `Then send the token as "Authorization: bearer <token>". Calls to providers are printed below.`,
      "",
    ].join("\n"),
  );
  let stopping: Promise<void> | undefined;
  const stop = () => {
    if (stopping === undefined) process.stdout.write("provider-kit platform: stopping\n");
    void (stopping ??= platform.close().then(() => process.exit(0)));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // Started through npm or a shell that is killed without passing a signal on, the platform
  // would keep running, re-parented, and hold its port: it stops with its parent.
  onParentExit(stop);
}

function redacted(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
