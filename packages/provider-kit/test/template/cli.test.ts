/**
 * `provider-kit init`, `provider-kit manifest` (the YAML, and the platform's manifest of the
 * actions) and `provider-kit --version` as a user runs them:
 * real processes of the CLI (from source, through tsx), their output and exit codes.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init.js";
import { SERVICE_ID_RULE } from "../../src/cli/manifest.js";
import ownPackage from "../../package.json" with { type: "json" };
import { readManifestYaml } from "./manifest-yaml.js";
import { run } from "../../../../test/support/processes.js";

const root = path.resolve(import.meta.dirname, "../..");
const repository = path.resolve(root, "../..");
const tsx = path.join(repository, "node_modules", ".bin", "tsx");
const main = path.join(root, "src", "cli", "main.ts");
const providerKit = (args: string[], cwd: string, env: Record<string, string> = {}) =>
  run(tsx, ["--conditions=source", main, ...args], { cwd, env });

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), "provider-kit-cli-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("provider-kit --version", () => {
  it.each(["--version", "-v"])("%s prints the version of provider-kit", async (flag) => {
    const result = await providerKit([flag], scratch);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`${ownPackage.version}\n`);
  });
});

describe("provider-kit init", () => {
  it("writes the project and prints the next steps", async () => {
    const result = await providerKit(["init", "billing", "--endpoint", "https://billing.example.com"], scratch);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('Created provider "billing" in billing');
    // A step past a second says so on stderr (packing with npm pack usually is), nothing else does.
    for (const line of result.stderr.split("\n").filter((text) => text !== "")) expect(line).toMatch(/^(Packing|Writing|Copying) .*\.\.\.$/);
    expect(result.stdout).toContain("the project depends on the copy in vendor/provider-kit-");
    expect(result.stdout).toMatch(/npm install[\s\S]*npm test[\s\S]*npm start[\s\S]*npm run dev[\s\S]*tsuru service-create service.yaml/);
    const manifest = readManifestYaml(await readFile(path.join(scratch, "billing", "service.yaml"), "utf8"));
    expect(manifest).toMatchObject({ id: "billing", endpoint: { production: "https://billing.example.com" } });
  });

  it("depends on provider-kit from the npm registry with --registry-version", async () => {
    const result = await providerKit(["init", "published", "--registry-version", "^1.2.0"], scratch);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("provider-kit comes from the npm registry: ^1.2.0.");
    const pkg = JSON.parse(await readFile(path.join(scratch, "published", "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(pkg.dependencies["provider-kit"]).toBe("^1.2.0");
  });

  it("refuses a non-empty directory with a clear message and a non-zero exit", async () => {
    const dir = path.join(scratch, "taken");
    await mkdir(dir);
    await writeFile(path.join(dir, "keep.txt"), "mine");

    const result = await providerKit(["init", "taken"], scratch);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`${dir} is not empty: refusing to overwrite it.`);
    expect(await readdir(dir)).toEqual(["keep.txt"]);
  });

  it("rejects an invalid service id, saying the platform's rule", async () => {
    const result = await providerKit(["init", "ok-dir", "--service-id", "Bad_Id"], scratch);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain(`Invalid service id "Bad_Id": use ${SERVICE_ID_RULE}`);
  });
});

describe("provider-kit manifest", () => {
  let project: string;
  beforeAll(async () => {
    project = (await initProject({ dir: path.join(scratch, "search"), serviceId: "search-svc", registryVersion: "^0.1.0" })).dir;
  });

  it("prints the manifest of the project it runs in, as YAML with every field", async () => {
    const result = await providerKit(["manifest", "--endpoint", "https://search.example.com"], project);
    expect(result.code, result.stderr).toBe(0);
    const env = await readFile(path.join(project, ".env"), "utf8");
    expect(readManifestYaml(result.stdout)).toEqual({
      id: "search-svc",
      username: "search-svc",
      password: /^PROVIDER_PASSWORD=(.+)$/m.exec(env)?.[1],
      endpoint: { production: "https://search.example.com" },
    });
  });

  it("takes the password from PROVIDER_PASSWORD in the environment first", async () => {
    const result = await providerKit(["manifest"], project, { PROVIDER_PASSWORD: "from-the-environment" });
    expect(result.code, result.stderr).toBe(0);
    expect(readManifestYaml(result.stdout)).toMatchObject({ password: "from-the-environment" });
  });

  it("fails outside a project, saying what to do", async () => {
    const empty = path.join(scratch, "empty");
    await mkdir(empty);
    const result = await providerKit(["manifest"], empty);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("No package.json in");
    expect(result.stderr).toContain("provider-kit init");
  });
});

describe("provider-kit manifest --actions", () => {
  let project: string;
  const declarations = (from: string) => `
import { declareActions, instanceAction, serviceAction, z } from ${JSON.stringify(from)};
export const actions = declareActions({
  rotate: instanceAction({ name: "apps.rotate-password", method: "POST", path: "/apps/:app/rotate-password", lock: true, body: z.object({ length: z.number() }) }),
  memory: instanceAction({ name: "memory", method: "GET", path: "/memory", lock: false }),
  regions: serviceAction({ name: "regions", method: "GET", path: "/regions" }),
});
`;
  const OPERATIONS = [
    { method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" },
    { method: "GET", path: "/memory", action: "memory" },
  ];

  beforeAll(async () => {
    project = path.join(scratch, "with-actions");
    await mkdir(path.join(project, "node_modules"), { recursive: true });
    // The project's own tsx, as a project made by init has it.
    await symlink(path.join(repository, "node_modules", "tsx"), path.join(project, "node_modules", "tsx"));
    await writeFile(path.join(project, "actions.ts"), declarations(path.join(root, "src", "index.ts")));
    await writeFile(path.join(project, "actions.mjs"), declarations(path.join(root, "dist", "index.js")).replace("export const actions", "export const declared"));
  });

  it("prints the platform's manifest of the actions a TypeScript module declares, without building it", async () => {
    const result = await providerKit(["manifest", "--actions", "actions.ts"], project);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ enabled: true, strict_actions: true, legacy_compat: false, operations: OPERATIONS });
  });

  it("reads a compiled module's export of another name, and the platform's two switches", async () => {
    const result = await providerKit(["manifest", "--actions", "actions.mjs", "--export", "declared", "--no-strict-actions", "--legacy-compat"], project);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({ enabled: true, strict_actions: false, legacy_compat: true, operations: OPERATIONS });
  });

  it("fails, saying what to do, for a module without the export", async () => {
    const result = await providerKit(["manifest", "--actions", "actions.mjs"], project);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('actions.mjs has no export "actions" made by declareActions(...)');
  });

  it("fails for a TypeScript module where no tsx is installed", async () => {
    const bare = path.join(scratch, "bare");
    await mkdir(bare);
    await writeFile(path.join(bare, "actions.ts"), declarations(path.join(root, "src", "index.ts")));
    const result = await providerKit(["manifest", "--actions", "actions.ts"], bare);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain("is TypeScript, and tsx is not installed for it: npm install --save-dev tsx, or give the compiled .js file.");
  });
});
