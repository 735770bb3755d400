/**
 * `provider-kit init <dir>`: writes a new provider project from `templates/provider/`.
 *
 * Template file names: a leading `_` stands for a leading `.` (`_gitignore` → `.gitignore`:
 * npm would drop a real .gitignore from the package), and a `.tmpl` suffix marks a file whose
 * `{{placeholders}}` are filled in (and keeps files like package.json from confusing tooling
 * in this repository). Every other file is copied as it is.
 *
 * provider-kit itself: the project depends on a copy of the running provider-kit and of the
 * packages installed beside it that it uses (the Redis registry; for development, the
 * conformance kit and the local platform that `provider-kit dev` runs), all packed into its
 * `vendor/` folder, so it installs without them on the npm registry (from a checkout and from an
 * installed package alike); `--registry-version` depends on the registry instead.
 */
import { existsSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { assertEndpoint, assertServiceId, generatePassword, renderManifest, type ServiceManifest } from "./manifest.js";
import { ownPackage, packageRoot, packPackage, type OwnPackage } from "./own-package.js";
import { EXIT } from "./exit-codes.js";

export interface InitOptions {
  /** Directory to create the project in; must be absent or empty. */
  dir: string;
  /** Project (npm package) name. Default: the directory's name. */
  name?: string;
  /** The platform's service id. Default: the project name. */
  serviceId?: string;
  /** Where the platform will reach the provider. Default: `DEFAULT_ENDPOINT`. */
  endpoint?: string;
  /**
   * Depend on provider-kit from the npm registry, at this version or range (once it is
   * published there). Default: a copy of the running provider-kit, packed into `vendor/`.
   */
  registryVersion?: string;
  /** Told, in one line, of each step (packing, writing, copying) still running after `slowStepMs`: the CLI prints it. */
  onSlowStep?: (line: string) => void;
  /** How long a step runs before `onSlowStep` hears of it (0: every step, as it starts). Default 1 000 ms. */
  slowStepMs?: number;
}

export interface InitResult {
  dir: string;
  manifest: ServiceManifest;
  /** Paths written, relative to `dir`. */
  files: string[];
  /** package.json's dependency on provider-kit: `file:vendor/provider-kit-<version>.tgz`, or the registry range. */
  providerKit: string;
}

const DEFAULT_PORT = 8080;
const DEFAULT_ENDPOINT = `http://localhost:${DEFAULT_PORT}`;
/** npm's rule for package names (unscoped or scoped), which package.json's `name` must follow. */
const NPM_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]{0,213}$/;

/** Characters of an npm version or range (`0.2.0`, `^0.1.0`, `>=0.1 <1`, `latest`): no paths, URLs or `file:`. */
const VERSION_RANGE = /^[0-9A-Za-z.^~<>=|*+ -]+$/;
/** Folder of a generated project that holds its copies of provider-kit and its companion packages. */
const VENDOR_DIR = "vendor";

/** A step running longer than this says what it is doing, so the terminal is never silent for long. */
const SLOW_STEP_MS = 1_000;

/** Tells of one step of init when it runs past the threshold. */
type StepReporter = <T>(what: string, work: () => Promise<T>) => Promise<T>;

function stepReporter(options: Pick<InitOptions, "onSlowStep" | "slowStepMs">): StepReporter {
  const { onSlowStep, slowStepMs = SLOW_STEP_MS } = options;
  return async (what, work) => {
    // 0: every step, told as it starts (a 0 ms timer could lose the race with a quick step).
    if (slowStepMs <= 0) onSlowStep?.(`${what}...`);
    const timer = onSlowStep && slowStepMs > 0 ? setTimeout(() => onSlowStep(`${what}...`), slowStepMs) : undefined;
    try {
      return await work();
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * The packages beside provider-kit that a generated project depends on: the Redis registry it
 * runs on in production, the conformance kit its tests run, and the local platform of
 * `provider-kit dev` (which needs the Redis registry's package too).
 */
const COMPANIONS = ["@provider-kit/redis-store", "@provider-kit/conformance", "@provider-kit/platform"] as const;

/** Where a generated project gets provider-kit and its companions from. */
interface ProviderKitSource {
  /** The dependency in package.json on provider-kit, or on one of its companions. */
  specOf: (pkg: string) => string | undefined;
  /** One paragraph of the project's README saying where provider-kit comes from. */
  readme: string;
  /** The tarballs to copy into `vendor/`, when the project gets its own copies. */
  tarballs: string[];
}

function registrySource(range: string): ProviderKitSource {
  if (!VERSION_RANGE.test(range.trim())) {
    throw new Error(
      `Invalid --registry-version "${range}": give a version or range of provider-kit on the npm registry, e.g. "^0.1.0".`,
    );
  }
  const spec = range.trim();
  return {
    specOf: (pkg) => (pkg === "provider-kit" || (COMPANIONS as readonly string[]).includes(pkg) ? spec : undefined),
    readme: `provider-kit and its packages (${COMPANIONS.join(", ")}) come from the npm registry (\`${spec}\` in package.json).`,
    tarballs: [],
  };
}

/**
 * A copy of the running provider-kit and of its companions installed beside it for the
 * project's `vendor/`, packed into `scratch`: the project installs without the npm registry
 * having them, from a checkout or from an installed package alike.
 */
async function vendoredSource(scratch: string, step: StepReporter): Promise<ProviderKitSource> {
  const roots = new Map<string, string>([["provider-kit", ownPackage().root]]);
  for (const companion of COMPANIONS) {
    const root = packageRoot(companion);
    if (root === undefined) {
      throw new Error(
        `provider-kit init packs ${companion} into the new project, and it is not installed beside provider-kit: ` +
          `npm install --save-dev ${companion}, or pass --registry-version <range> to take every package from the npm registry.`,
      );
    }
    roots.set(companion, root);
  }
  const specs = new Map<string, string>();
  const tarballs: string[] = [];
  for (const [pkg, root] of roots) {
    const tarball = await step(`Packing ${pkg} for ${VENDOR_DIR}/ (npm pack)`, () => packPackage(root, scratch));
    specs.set(pkg, `file:${VENDOR_DIR}/${tarball}`);
    tarballs.push(path.join(scratch, tarball));
  }
  const kit = specs.get("provider-kit")!;
  return {
    specOf: (pkg) => specs.get(pkg),
    tarballs,
    readme: [
      `provider-kit comes from \`${kit.slice("file:".length)}\`, and ${COMPANIONS.join(", ")} from`,
      `their tarballs beside it: \`provider-kit init\` packed the ones that made this project into`,
      `\`${VENDOR_DIR}/\`, as the packages are not on the npm registry yet, and package.json depends on them`,
      `(\`${kit}\`). Keep them in version control: \`npm install\` and \`npm ci\` install`,
      `from them. Once provider-kit is published, switch with \`npm install provider-kit@<version>\``,
      `(and the same for each of the others), and delete \`${VENDOR_DIR}/\`.`,
    ].join("\n"),
  };
}

/** The dependency range a generated project uses: provider-kit's packages from `source`, and our own (dev and optional) tools. */
function versionLookup(own: OwnPackage, source: ProviderKitSource): (pkg: string) => string {
  return (pkg) => {
    const range = source.specOf(pkg) ?? own.devDependencies?.[pkg] ?? own.dependencies?.[pkg] ?? own.peerDependencies?.[pkg];
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
    "# Where the registry keeps instances: a redis:// URL in production, memory for local trials (see .env.example);",
    "# under `provider-kit dev`, memory means a Redis that dev runs, so instances survive the provider's restarts.",
    "REGISTRY_STORE=memory",
    "",
  ].join("\n");
}

/**
 * Writes a new provider project. Throws (writing nothing) when the options are invalid or
 * provider-kit cannot be packed into it.
 */
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

  const step = stepReporter(options);
  const scratch = await mkdtemp(path.join(os.tmpdir(), "provider-kit-init-"));
  try {
    const source =
      options.registryVersion === undefined ? await vendoredSource(scratch, step) : registrySource(options.registryVersion);
    return await writeProject({ dir, name, serviceId, endpoint, source }, step);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

async function writeProject(project: {
  dir: string;
  name: string;
  serviceId: string;
  endpoint: string;
  source: ProviderKitSource;
}, step: StepReporter): Promise<InitResult> {
  const { dir, name, serviceId, endpoint, source } = project;
  const { root, pkg } = ownPackage();
  const versionOf = versionLookup(pkg, source);
  const manifest: ServiceManifest = { id: serviceId, username: serviceId, password: generatePassword(), endpoint };
  const values = {
    name,
    serviceId,
    port: String(DEFAULT_PORT),
    providerKitSource: source.readme,
    // One Node.js requirement for provider-kit and the projects it makes (whose CLI they run).
    nodeEngines: pkg.engines.node,
  };

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
  await step(`Writing the project's files from the template into ${dir}`, async () => {
    for (const template of templates) {
      const content = await readFile(path.join(templateDir, template), "utf8");
      await write(outputPath(template), template.endsWith(".tmpl") ? render(content, values, versionOf) : content);
    }
  });
  if (source.tarballs.length > 0) {
    await step(`Copying the packed packages into ${VENDOR_DIR}/`, async () => {
      await mkdir(path.join(dir, VENDOR_DIR));
      for (const tarball of source.tarballs) {
        const relative = path.join(VENDOR_DIR, path.basename(tarball));
        await copyFile(tarball, path.join(dir, relative));
        files.push(relative);
      }
    });
  }
  // The two files holding the password: readable by their owner only, from the moment they exist.
  await write(".env", envFile(manifest), 0o600);
  await write("service.yaml", renderManifest(manifest), 0o600);
  return { dir, manifest, files, providerKit: versionOf("provider-kit") };
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
    .option(
      "--registry-version <range>",
      "depend on this version of provider-kit from the npm registry, once it is published there " +
        `(default: a copy of this provider-kit, packed into ${VENDOR_DIR}/)`,
    )
    .action(async (dir: string, options: Omit<InitOptions, "dir">, command: Command) => {
      let result: InitResult;
      try {
        // stderr: stdout keeps the result and the next steps alone.
        result = await initProject({ ...options, dir, onSlowStep: (line) => process.stderr.write(`${line}\n`) });
      } catch (error) {
        command.error(`error: ${(error as Error).message}`, { exitCode: EXIT.usage });
      }
      const shown = path.relative(process.cwd(), result.dir) || ".";
      const vendored = result.providerKit.startsWith("file:");
      process.stdout.write(
        [
          `Created provider "${result.manifest.id}" in ${shown} (${result.files.length} files).`,
          vendored
            ? `provider-kit is not on the npm registry: the project depends on the copy in ${result.providerKit.slice("file:".length)}, and on the copies of its packages beside it (keep them in version control).`
            : `provider-kit comes from the npm registry: ${result.providerKit}.`,
          "",
          "Next steps:",
          `  cd ${shown}`,
          "  npm install",
          "  npx provider-kit dev  # the provider on a local platform, with a demo app, restarted on every change",
          "  npm test",
          `  npm start             # listens on PORT from .env (${DEFAULT_PORT})`,
          "  npm run dev           # the same, restarting on every change to src/",
          "",
          "Register it on the platform (edit endpoint.production first):",
          "  tsuru service-create service.yaml",
          "",
        ].join("\n"),
      );
    });
}
