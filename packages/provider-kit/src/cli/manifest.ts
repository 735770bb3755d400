/**
 * The service manifest: the YAML the platform registers a provider from
 * (`tsuru service-create service.yaml`), and `provider-kit manifest`, which prints it for a
 * project made by `provider-kit init`. With `--actions <module>` it prints instead the JSON the
 * platform (1.31) takes for the service's custom actions, from the module's declarations.
 *
 * Where `provider-kit manifest` finds each field (in a project directory):
 * - id:       `--service-id`, else package.json `providerKit.serviceId`, else package.json `name`
 * - username: PROVIDER_USERNAME, password: PROVIDER_PASSWORD (required; the same settings the
 *             provider itself runs with)
 * - endpoint: `--endpoint`, else PROVIDER_ENDPOINT
 * Settings come from the environment first, then from the project's `.env` file.
 */
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { parseEnv } from "node:util";
import type { Command } from "commander";
import { actionsManifest } from "../actions.js";
import { loadActions } from "./actions-module.js";
import { EXIT } from "./exit-codes.js";
import { SERVICE_NAME_PATTERN } from "../contract.js";

export interface ServiceManifest {
  id: string;
  username: string;
  password: string;
  /** Address at which the platform reaches the provider (`endpoint.production`). */
  endpoint: string;
}

export const SERVICE_ID_RULE =
  "lower-case letters, digits and dashes, starting with a letter, at most 40 characters";

/** Throws, saying the rule and what to do, unless `id` is a valid service id. `hint` names the fix. */
export function assertServiceId(id: string, hint: string): void {
  if (!SERVICE_NAME_PATTERN.test(id)) {
    throw new Error(`Invalid service id "${id}": use ${SERVICE_ID_RULE} (e.g. "my-service").${hint ? ` ${hint}` : ""}`);
  }
}

/** Throws unless `endpoint` is an absolute http(s) URL. */
export function assertEndpoint(endpoint: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(endpoint).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== "http:" && protocol !== "https:") {
    throw new Error(
      `Invalid endpoint "${endpoint}": give the full address at which the platform reaches the provider, ` +
        `e.g. "https://my-service.example.com".`,
    );
  }
}

/** A new provider password: 24 random bytes, URL-safe so it survives .env files and shells. */
export function generatePassword(): string {
  return randomBytes(24).toString("base64url");
}

/** JSON strings are valid YAML double-quoted scalars: quoting every value keeps any password safe. */
const yamlString = (value: string) => JSON.stringify(value);

export function renderManifest(manifest: ServiceManifest): string {
  return [
    "# Service manifest: register this provider with `tsuru service-create service.yaml`.",
    "# It holds the provider's password: keep it out of version control.",
    `id: ${yamlString(manifest.id)}`,
    `username: ${yamlString(manifest.username)}`,
    `password: ${yamlString(manifest.password)}`,
    "endpoint:",
    `  production: ${yamlString(manifest.endpoint)}`,
    "",
  ].join("\n");
}

export interface ProjectManifestOptions {
  /** The project directory (with package.json and, usually, .env). */
  dir: string;
  /** Process environment; wins over the project's .env file, as it does for the running provider. */
  env: NodeJS.ProcessEnv;
  serviceId?: string;
  endpoint?: string;
}

interface ProjectPackage {
  name?: unknown;
  providerKit?: { serviceId?: unknown };
}

async function readProjectPackage(dir: string): Promise<ProjectPackage> {
  const file = path.join(dir, "package.json");
  if (!existsSync(file)) {
    throw new Error(
      `No package.json in ${dir}: run this in a project made by \`provider-kit init\`, or pass --dir <project>.`,
    );
  }
  return JSON.parse(await readFile(file, "utf8")) as ProjectPackage;
}

async function readDotEnv(dir: string): Promise<NodeJS.Dict<string>> {
  const file = path.join(dir, ".env");
  return existsSync(file) ? parseEnv(await readFile(file, "utf8")) : {};
}

/** The manifest of the project in `options.dir`, from its package.json, .env and the environment. */
export async function projectManifest(options: ProjectManifestOptions): Promise<ServiceManifest> {
  const pkg = await readProjectPackage(options.dir);
  const dotEnv = await readDotEnv(options.dir);
  const setting = (key: string): string => {
    const value = options.env[key] || dotEnv[key];
    if (!value) throw new Error(`${key} is not set: set it in the environment or in ${path.join(options.dir, ".env")}.`);
    return value;
  };

  const configuredId = options.serviceId ?? pkg.providerKit?.serviceId ?? pkg.name;
  if (typeof configuredId !== "string") {
    throw new Error("The project has no service id: pass --service-id, or set providerKit.serviceId in package.json.");
  }
  assertServiceId(configuredId, "Pass --service-id, or fix providerKit.serviceId in package.json.");

  const endpoint = options.endpoint ?? setting("PROVIDER_ENDPOINT");
  assertEndpoint(endpoint);

  return {
    id: configuredId,
    username: setting("PROVIDER_USERNAME"),
    password: setting("PROVIDER_PASSWORD"),
    endpoint,
  };
}

interface ManifestCommandOptions {
  dir: string;
  serviceId?: string;
  endpoint?: string;
  actions?: string;
  export: string;
  strictActions: boolean;
  legacyCompat: boolean;
}

async function printManifest(options: ManifestCommandOptions): Promise<void> {
  if (options.actions !== undefined) {
    const declared = await loadActions(options.actions, options.export);
    const manifest = actionsManifest(declared, { strictActions: options.strictActions, legacyCompat: options.legacyCompat });
    process.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
    return;
  }
  const manifest = await projectManifest({ ...options, dir: path.resolve(options.dir), env: process.env });
  process.stdout.write(renderManifest(manifest));
}

/** Adds `provider-kit manifest` to the CLI. */
export function registerManifest(program: Command): void {
  program
    .command("manifest")
    .description(
      "print the service manifest (YAML) of the provider project in the current directory; " +
        "with --actions, the platform's manifest of its custom actions (JSON, for PUT /1.31/services/<service>/manifest)",
    )
    .option("--dir <path>", "project directory", ".")
    .option("--service-id <id>", "service id (default: package.json providerKit.serviceId, else its name)")
    .option("--endpoint <url>", "address at which the platform reaches the provider (default: PROVIDER_ENDPOINT)")
    .option("--actions <module>", "module exporting the provider's declareActions(...) (.ts through the project's tsx, or .js)")
    .option("--export <name>", "the module's export holding the declarations", "actions")
    .option("--no-strict-actions", "let holders of the platform's general proxy permission call paths no action declares")
    .option("--legacy-compat", "let holders of the platform's general proxy permission call the declared actions too", false)
    .action(async (options: ManifestCommandOptions, command: Command) => {
      try {
        await printManifest(options);
      } catch (error) {
        command.error(`error: ${(error as Error).message}`, { exitCode: EXIT.usage });
      }
    });
}
