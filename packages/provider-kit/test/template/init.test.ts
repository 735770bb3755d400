/**
 * `provider-kit init` and `provider-kit manifest` as functions: what gets written, what is
 * refused, and the manifest a generated project prints. Fast: nothing is installed here
 * (project.test.ts installs and runs a generated project).
 */
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initProject, type InitOptions } from "../../src/cli/init.js";
import { projectManifest, renderManifest, SERVICE_ID_RULE } from "../../src/cli/manifest.js";
import ownPackage from "../../package.json" with { type: "json" };
import { readManifestYaml } from "./manifest-yaml.js";
import { run } from "../../../../test/support/processes.js";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "provider-kit-init-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

/**
 * init depending on provider-kit from the registry: packing provider-kit into the project (the
 * default) costs an `npm pack`, which only the tests about that dependency need.
 */
const initFromRegistry = (options: InitOptions) => initProject({ registryVersion: `^${ownPackage.version}`, ...options });

let counter = 0;
/** A fresh, not yet existing directory under the scratch folder, named `name`. */
async function freshDir(name = "my-service"): Promise<string> {
  const parent = path.join(scratch, String(++counter));
  await mkdir(parent);
  return path.join(parent, name);
}

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)))
    .sort();
}

describe("provider-kit init", () => {
  it("writes a complete project with every placeholder filled in", async () => {
    const dir = await freshDir();
    const result = await initProject({ dir });

    const files = await listFiles(dir);
    expect([...result.files].sort()).toEqual(files);
    for (const expected of [
      "package.json",
      "tsconfig.json",
      ".gitignore",
      ".env.example",
      ".env",
      "service.yaml",
      "README.md",
      "tsconfig.build.json",
      "src/main.ts",
      "src/handlers.ts",
      "src/actions.ts",
      "src/resource.ts",
      "test/provider.test.ts",
      "test/conformance.test.ts",
      "vitest.config.ts",
      ".github/workflows/conformance.yml",
    ]) {
      expect(files).toContain(expected);
    }
    expect(files.filter((file) => file.endsWith(".tmpl") || path.basename(file).startsWith("_"))).toEqual([]);
    for (const file of files.filter((name) => !name.endsWith(".tgz"))) {
      expect(await readFile(path.join(dir, file), "utf8"), file).not.toMatch(/\{\{[^}]*\}\}/);
    }
    // provider-kit is not on the npm registry: a link to its page there would not open.
    expect(await readFile(path.join(dir, "README.md"), "utf8")).not.toMatch(/npmjs\.com/);
  });

  it("puts every handler in place, background provisioning with its progress included", async () => {
    const dir = await freshDir();
    await initFromRegistry({ dir });
    const handlers = await readFile(path.join(dir, "src", "handlers.ts"), "utf8");
    for (const handler of [
      "plans",
      "create",
      "provision",
      "update",
      "destroy",
      "bindApp",
      "unbindApp",
      "bindUnit",
      "unbindUnit",
      "bindJob",
      "unbindJob",
      "status",
      "info",
    ]) {
      expect(handlers, handler).toMatch(new RegExp(`^    (async )?${handler}[(:]`, "m"));
    }
    expect(handlers).toContain("return { pending: true }");
    expect(handlers).toContain('await progress("');
  });

  it("writes tests that take the plans from the provider and their time limit from vitest.config.ts alone", async () => {
    const dir = await freshDir();
    await initFromRegistry({ dir });
    const read = (file: string) => readFile(path.join(dir, file), "utf8");
    const handlers = await read("src/handlers.ts");
    const planNames = [...handlers.matchAll(/\{ name: "([^"]+)", description:/g)].map(([, name]) => name!);
    expect(planNames.length).toBeGreaterThan(1);
    const providerTest = await read("test/provider.test.ts");
    // Renaming a plan in src/handlers.ts needs no edit in the tests: they ask GET /resources/plans.
    expect(providerTest).toContain('"/resources/plans"');
    for (const test of ["test/provider.test.ts", "test/conformance.test.ts"]) {
      const source = await read(test);
      for (const plan of planNames) expect(source, `${test} names the plan "${plan}"`).not.toMatch(new RegExp(`\\b${plan}\\b`));
      // No limit of their own (vitest's 5 s default once stopped a create of 10 s): the config's testTimeout, generous.
      expect(source, test).not.toMatch(/Date\.now\(\) \+ [\d_]+|\}, [\d_]+\);/);
    }
    const timeout = /testTimeout: ([\d_]+)/.exec(await read("vitest.config.ts"))?.[1];
    expect(Number(timeout?.replaceAll("_", ""))).toBeGreaterThanOrEqual(60_000);
    expect(providerTest).toContain("task.timeout");
  });

  it("makes package.json depend on copies of this provider-kit and its packages in vendor/, and on the kit's own dev tool versions", async () => {
    const dir = await freshDir("queue-provider");
    const result = await initProject({ dir });
    const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as {
      name: string;
      providerKit: unknown;
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
      engines: unknown;
      scripts: Record<string, string>;
    };

    expect(pkg.name).toBe("queue-provider");
    expect(pkg.providerKit).toEqual({ serviceId: "queue-provider" });
    const tarball = `vendor/provider-kit-${ownPackage.version}.tgz`;
    const vendored = (name: string) => `file:vendor/provider-kit-${name}-${ownPackage.version}.tgz`;
    expect(pkg.dependencies).toEqual({
      "provider-kit": `file:${tarball}`,
      // The registry in Redis, which production runs on.
      "@provider-kit/redis-store": vendored("redis-store"),
      pino: ownPackage.dependencies.pino,
    });
    expect(result.providerKit).toBe(`file:${tarball}`);
    expect(pkg.engines).toEqual(ownPackage.engines);
    // The conformance kit the tests run and the platform `provider-kit dev` runs come from vendor/ too.
    const { "@provider-kit/conformance": conformance, "@provider-kit/platform": platform, ...tools } = pkg.devDependencies;
    expect([conformance, platform]).toEqual([vendored("conformance"), vendored("platform")]);
    // Our own dev tools, and pino-pretty (an optional peer of provider-kit) for `dev`'s readable log.
    const ownTools: Record<string, string> = { ...ownPackage.devDependencies, ...ownPackage.peerDependencies };
    expect(tools["pino-pretty"]).toBe(ownPackage.peerDependencies["pino-pretty"]);
    for (const [tool, range] of Object.entries(tools)) {
      expect(range, tool).toBe(ownTools[tool]);
    }
    expect(Object.keys(pkg.scripts)).toEqual(expect.arrayContaining(["start", "dev", "test", "build", "typecheck"]));

    // The copy is this package as npm publishes it: the built code, the templates, this version.
    const listing = await run("tar", ["-tzf", tarball], { cwd: dir });
    expect(listing.stdout.split("\n")).toEqual(
      expect.arrayContaining([
        "package/package.json",
        "package/dist/index.js",
        "package/dist/cli/main.js",
        "package/templates/provider/package.json.tmpl",
      ]),
    );
    const packed = await run("tar", ["-xzOf", tarball, "package/package.json"], { cwd: dir });
    expect(JSON.parse(packed.stdout)).toMatchObject({ name: "provider-kit", version: ownPackage.version });
    expect(await readFile(path.join(dir, "README.md"), "utf8")).toContain(`provider-kit comes from \`${tarball}\``);
  });

  it("tells of each step still running after slowStepMs (one line each, in order), and of none that finish sooner", async () => {
    const dir = await freshDir();
    const told: string[] = [];
    await initProject({ dir, onSlowStep: (line) => told.push(line), slowStepMs: 0 });
    expect(told).toEqual([
      "Packing provider-kit for vendor/ (npm pack)...",
      "Packing @provider-kit/redis-store for vendor/ (npm pack)...",
      "Packing @provider-kit/conformance for vendor/ (npm pack)...",
      "Packing @provider-kit/platform for vendor/ (npm pack)...",
      `Writing the project's files from the template into ${dir}...`,
      "Copying the packed packages into vendor/...",
    ]);
    const quiet: string[] = [];
    await initFromRegistry({ dir: await freshDir(), onSlowStep: (line) => quiet.push(line), slowStepMs: 60_000 });
    expect(quiet).toEqual([]);
  });

  it("depends on provider-kit from the npm registry with registryVersion, and copies nothing", async () => {
    const dir = await freshDir();
    const result = await initProject({ dir, registryVersion: "^0.2.0" });
    const pkg = JSON.parse(await readFile(path.join(dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const kitPackages = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const name of ["provider-kit", "@provider-kit/redis-store", "@provider-kit/conformance", "@provider-kit/platform"]) {
      expect(kitPackages[name], name).toBe("^0.2.0");
    }
    expect(result.files.filter((file) => file.startsWith("vendor"))).toEqual([]);
    expect(existsSync(path.join(dir, "vendor"))).toBe(false);
    expect(await readFile(path.join(dir, "README.md"), "utf8")).toContain(
      "provider-kit and its packages (@provider-kit/redis-store, @provider-kit/conformance, @provider-kit/platform) come from the npm registry (`^0.2.0`",
    );
  });

  it.each(["file:../provider-kit", "https://example.com/provider-kit.tgz", "../provider-kit", ""])(
    "rejects the registry version %j, and writes nothing",
    async (registryVersion) => {
      const dir = await freshDir();
      await expect(initProject({ dir, registryVersion })).rejects.toThrow(
        `Invalid --registry-version "${registryVersion}": give a version or range of provider-kit on the npm registry`,
      );
      expect(existsSync(dir)).toBe(false);
    },
  );

  it("writes service.yaml and .env with one random password, readable by the owner only", async () => {
    const dir = await freshDir("cache");
    const { manifest } = await initFromRegistry({ dir, endpoint: "https://cache.example.com" });

    const yaml = readManifestYaml(await readFile(path.join(dir, "service.yaml"), "utf8"));
    expect(yaml).toEqual({
      id: "cache",
      username: "cache",
      password: manifest.password,
      endpoint: { production: "https://cache.example.com" },
    });
    expect(manifest.password).toMatch(/^[A-Za-z0-9_-]{32}$/);

    const env = await readFile(path.join(dir, ".env"), "utf8");
    expect(env).toContain(`PROVIDER_PASSWORD=${manifest.password}\n`);
    expect(env).toContain("PROVIDER_USERNAME=cache\n");
    expect(await readFile(path.join(dir, ".env.example"), "utf8")).not.toContain(manifest.password);
    for (const secret of [".env", "service.yaml"]) {
      expect((await stat(path.join(dir, secret))).mode & 0o777, secret).toBe(0o600);
    }
    const gitignore = (await readFile(path.join(dir, ".gitignore"), "utf8")).split("\n");
    expect(gitignore).toEqual(expect.arrayContaining([".env", "service.yaml", "node_modules/", ".provider-kit/"]));
  });

  it("gives every new project a different password", async () => {
    const first = await initFromRegistry({ dir: await freshDir() });
    const second = await initFromRegistry({ dir: await freshDir() });
    expect(first.manifest.password).not.toBe(second.manifest.password);
  });

  it("takes the service id from --service-id, else --name, else the directory name", async () => {
    expect((await initFromRegistry({ dir: await freshDir("from-dir") })).manifest.id).toBe("from-dir");
    expect((await initFromRegistry({ dir: await freshDir("Some_Dir"), name: "from-name" })).manifest.id).toBe("from-name");
    const both = await initFromRegistry({ dir: await freshDir(), name: "@team/provider", serviceId: "team-db" });
    expect(both.manifest).toMatchObject({ id: "team-db", username: "team-db" });
    expect((JSON.parse(await readFile(path.join(both.dir, "package.json"), "utf8")) as { name: string }).name).toBe("@team/provider");
  });

  it("writes into an existing empty directory", async () => {
    const dir = await freshDir();
    await mkdir(dir);
    await initFromRegistry({ dir });
    expect(existsSync(path.join(dir, "package.json"))).toBe(true);
  });

  it("refuses a non-empty directory and leaves it as it was", async () => {
    const dir = await freshDir();
    await mkdir(dir);
    await writeFile(path.join(dir, "notes.txt"), "mine");

    await expect(initFromRegistry({ dir })).rejects.toThrow(/is not empty: refusing to overwrite it/);
    expect(await listFiles(dir)).toEqual(["notes.txt"]);
    expect(await readFile(path.join(dir, "notes.txt"), "utf8")).toBe("mine");
  });

  it("refuses a path that is a file", async () => {
    const file = await freshDir("a-file");
    await writeFile(file, "x");
    await expect(initFromRegistry({ dir: file })).rejects.toThrow(/exists and is not a directory/);
  });

  const goodIds = ["a", "db", "my-service", "redis2", "a-1-b", "x".repeat(40), "trailing-"];
  const badIds = [
    "My-service",
    "1db",
    "-db",
    "my_service",
    "my.service",
    "my service",
    "café",
    "x".repeat(41),
    "",
  ];

  it.each(goodIds)("accepts the service id %j", async (serviceId) => {
    const { manifest } = await initFromRegistry({ dir: await freshDir(), serviceId });
    expect(manifest.id).toBe(serviceId);
  });

  it.each(badIds)("rejects the service id %j, saying the rule, and writes nothing", async (serviceId) => {
    const dir = await freshDir();
    await expect(initFromRegistry({ dir, serviceId })).rejects.toThrow(SERVICE_ID_RULE);
    expect(existsSync(dir)).toBe(false);
  });

  it("rejects a directory name that is not a valid service id, telling how to choose one", async () => {
    const dir = await freshDir("Bad-Name");
    await expect(initFromRegistry({ dir })).rejects.toThrow(/--name/);
    await expect(initFromRegistry({ dir, name: "good-name-but-way-too-long-for-the-platform-id" })).rejects.toThrow(
      /--service-id/,
    );
    expect(existsSync(dir)).toBe(false);
  });

  it("rejects an endpoint that is not an http(s) address", async () => {
    await expect(initFromRegistry({ dir: await freshDir(), endpoint: "localhost:8080" })).rejects.toThrow(
      /Invalid endpoint "localhost:8080"/,
    );
  });
});

describe("the manifest of a generated project", () => {
  it("is the service.yaml that init wrote, read back from package.json and .env", async () => {
    const { dir } = await initFromRegistry({ dir: await freshDir("search") });
    const printed = renderManifest(await projectManifest({ dir, env: {} }));
    expect(printed).toBe(await readFile(path.join(dir, "service.yaml"), "utf8"));
  });

  it("takes settings from the environment before .env, and the endpoint and id from the options first", async () => {
    const { dir } = await initFromRegistry({ dir: await freshDir("search") });
    const manifest = await projectManifest({
      dir,
      env: { PROVIDER_PASSWORD: "from-env:with colon", PROVIDER_USERNAME: "svc-user" },
      endpoint: "https://search.example.com",
      serviceId: "search-prod",
    });
    expect(manifest).toEqual({
      id: "search-prod",
      username: "svc-user",
      password: "from-env:with colon",
      endpoint: "https://search.example.com",
    });
    expect(readManifestYaml(renderManifest(manifest))).toEqual({
      id: "search-prod",
      username: "svc-user",
      password: "from-env:with colon",
      endpoint: { production: "https://search.example.com" },
    });
  });

  it("says which setting is missing and where to set it", async () => {
    const { dir } = await initFromRegistry({ dir: await freshDir("search") });
    await rm(path.join(dir, ".env"));
    await expect(projectManifest({ dir, env: { PROVIDER_ENDPOINT: "http://x:1", PROVIDER_USERNAME: "u" } })).rejects.toThrow(
      /PROVIDER_PASSWORD is not set: set it in the environment or in .*\.env/,
    );
  });

  it("refuses a directory without package.json", async () => {
    const dir = await freshDir();
    await mkdir(dir);
    await expect(projectManifest({ dir, env: {} })).rejects.toThrow(/No package.json in .*provider-kit init/);
  });
});
