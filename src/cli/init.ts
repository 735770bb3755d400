/**
 * `provider-kit init <dir>`: writes a new provider project from `templates/provider/`.
 *
 * Template file names: a leading `_` stands for a leading `.` (`_gitignore` → `.gitignore`:
 * npm would drop a real .gitignore from the package), and a `.tmpl` suffix marks a file whose
 * `{{placeholders}}` are filled in (and keeps files like package.json from confusing tooling
 * in this repository). Every other file is copied as it is.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { assertEndpoint, assertServiceId, generatePassword, renderManifest, type ServiceManifest } from "./manifest.js";

export interface InitOptions {
  /** Directory to create the project in; must be absent or empty. */
  dir: string;
  /** Project (npm package) name. Default: the directory's name. */
  name?: string;
  /** The platform's service id. Default: the project name. */
  serviceId?: string;
  /** Where the platform will reach the provider. Default: `DEFAULT_ENDPOINT`. */
  endpoint?: string;
}

export interface InitResult {
  dir: string;
  manifest: ServiceManifest;
  /** Paths written, relative to `dir`. */
  files: string[];
}

const DEFAULT_PORT = 8080;
const DEFAULT_ENDPOINT = `http://localhost:${DEFAULT_PORT}`;
/** npm's rule for package names (unscoped or scoped), which package.json's `name` must follow. */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]{0,213}$/;

interface OwnPackage {
  version: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** This package's root and package.json: found by walking up, as the depth differs between src/ and dist/src/. */
export function ownPackage(): { root: string; pkg: OwnPackage } {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = path.join(dir, "package.json");
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, "utf8")) as OwnPackage & { name?: string };
      if (pkg.name === "provider-kit") return { root: dir, pkg };
    }
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("provider-kit's package.json not found: the installation is incomplete.");
    dir = parent;
  }
}

/** The dependency range a generated project uses: this version of provider-kit, and our own dev tools. */
function versionLookup(own: OwnPackage): (pkg: string) => string {
  return (pkg) => {
    if (pkg === "provider-kit") return `^${own.version}`;
    const range = own.devDependencies?.[pkg] ?? own.dependencies?.[pkg];
    if (range === undefined) throw new Error(`Template bug: no version known for ${pkg}.`);
    return range;
  };
}

/** Fills `{{key}}` and `{{version:package}}` placeholders; an unknown key is a template bug. */
function render(text: string, values: Record<string, string>, versionOf: (pkg: string) => string): string {
  return text.replace(/\{\{([^{}]+)\}\}/g, (_, key: string) => {
    if (key.startsWith("version:")) return versionOf(key.slice("version:".length));
    const value = values[key];
    if (value === undefined) throw new Error(`Template bug: unknown placeholder {{${key}}}.`);
    return value;
  });
}

/** Template path (relative) → output path (relative). */
function outputPath(templatePath: string): string {
  return templatePath
    .split(path.sep)
    .map((part) => part.replace(/^_/, ".").replace(/\.tmpl$/, ""))
    .join(path.sep);
}

async function assertEmptyDirectory(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  if (!(await stat(dir)).isDirectory()) {
    throw new Error(`${dir} exists and is not a directory: choose another path for the new project.`);
  }
  if ((await readdir(dir)).length > 0) {
    throw new Error(`${dir} is not empty: refusing to overwrite it. Choose a new directory, or empty this one first.`);
  }
}

function envFile(manifest: ServiceManifest): string {
  return [
    "# Settings of this provider (read by `npm start` and `provider-kit manifest`). Secret: never commit.",
    `PORT=${DEFAULT_PORT}`,
    `PROVIDER_USERNAME=${manifest.username}`,
    `PROVIDER_PASSWORD=${manifest.password}`,
    `PROVIDER_ENDPOINT=${manifest.endpoint}`,
    "",
  ].join("\n");
}

/** Writes a new provider project. Throws (writing nothing) when the options are invalid. */
export async function initProject(options: InitOptions): Promise<InitResult> {
  const dir = path.resolve(options.dir);
  const name = options.name ?? path.basename(dir);
  if (!NPM_NAME.test(name)) {
    throw new Error(
      `Invalid project name "${name}": npm package names use lower-case letters, digits, ".", "_" and "-".` +
        (options.name === undefined ? " Pass --name <name> (the directory name is the default)." : ""),
    );
  }
  const serviceId = options.serviceId ?? name;
  assertServiceId(
    serviceId,
    options.serviceId === undefined ? "It defaults to the project name; pass --service-id <id>." : "",
  );
  const endpoint = options.endpoint ?? DEFAULT_ENDPOINT;
  assertEndpoint(endpoint);
  await assertEmptyDirectory(dir);

  const { root, pkg } = ownPackage();
  const versionOf = versionLookup(pkg);
  const manifest: ServiceManifest = { id: serviceId, username: serviceId, password: generatePassword(), endpoint };
  const values = { name, serviceId, port: String(DEFAULT_PORT) };

  const templateDir = path.join(root, "templates", "provider");
  const templates = (await readdir(templateDir, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(templateDir, path.join(entry.parentPath, entry.name)))
    .sort();

  const files: string[] = [];
  const write = async (relative: string, content: string, mode?: number) => {
    await mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await writeFile(path.join(dir, relative), content, { mode });
    files.push(relative);
  };
  for (const template of templates) {
    const content = await readFile(path.join(templateDir, template), "utf8");
    await write(outputPath(template), template.endsWith(".tmpl") ? render(content, values, versionOf) : content);
  }
  // The two files holding the password: readable by their owner only, from the moment they exist.
  await write(".env", envFile(manifest), 0o600);
  await write("service.yaml", renderManifest(manifest), 0o600);
  return { dir, manifest, files };
}

/** Adds `provider-kit init <dir>` to the CLI. */
export function registerInit(program: Command): void {
  program
    .command("init")
    .description("create a new provider project in <dir> (which must be absent or empty)")
    .argument("<dir>", "directory of the new project")
    .option("--name <name>", "project name (default: the directory's name)")
    .option("--service-id <id>", "the platform's service id (default: the project name)")
    .option("--endpoint <url>", `address at which the platform reaches the provider (default: ${DEFAULT_ENDPOINT})`)
    .action(async (dir: string, options: Omit<InitOptions, "dir">, command: Command) => {
      let result: InitResult;
      try {
        result = await initProject({ ...options, dir });
      } catch (error) {
        command.error(`error: ${(error as Error).message}`);
      }
      const shown = path.relative(process.cwd(), result.dir) || ".";
      process.stdout.write(
        [
          `Created provider "${result.manifest.id}" in ${shown} (${result.files.length} files).`,
          "",
          "Next steps:",
          `  cd ${shown}`,
          "  npm install",
          "  npm test",
          "  npm start",
          "",
          "Register it on the platform (edit endpoint.production first):",
          "  tsuru service-create service.yaml",
          "",
        ].join("\n"),
      );
    });
}
