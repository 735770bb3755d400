/**
 * This copy of provider-kit, wherever it runs from: a checkout (src/ through tsx, or dist/),
 * or an installed package (node_modules/provider-kit, which holds only what `files` in
 * package.json ships).
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

export interface OwnPackage {
  version: string;
  engines: { node: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  /** Optional ones too (pino-pretty): a generated project may take them as dev tools. */
  peerDependencies?: Record<string, string>;
}

/** This package's root and package.json: found by walking up, as the depth differs between src/ and dist/. */
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

/**
 * The folder of package `name` as this provider-kit resolves it (in a checkout, the workspace's
 * link to packages/...), or undefined when it is not installed.
 */
export function packageRoot(name: string): string | undefined {
  try {
    return path.dirname(createRequire(import.meta.url).resolve(`${name}/package.json`));
  } catch {
    return undefined;
  }
}

/**
 * Packs the package in `root` (provider-kit, or one beside it) with `npm pack` into
 * `destination` and returns the tarball's file name. The built code is packed as it is on disk
 * (`--ignore-scripts`: an installed copy has no compiler to rebuild it with), so the tarball holds
 * exactly the code that is running.
 */
export async function packPackage(root: string, destination: string): Promise<string> {
  const { name, main } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { name: string; main: string };
  if (!existsSync(path.join(root, main))) {
    throw new Error(`${root} has no built ${name} (${main}): run \`npm run build\` at the root of the checkout first.`);
  }
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(
      "npm",
      ["pack", "--ignore-scripts", "--json", "--pack-destination", destination],
      { cwd: root, shell: process.platform === "win32" },
    ));
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    throw new Error(
      `Could not pack ${name} from ${root} with npm (${stderr?.trim() || message}). ` +
        "Once provider-kit is on the npm registry, pass --registry-version <range> to depend on it from there instead.",
      { cause: error },
    );
  }
  const [packed] = JSON.parse(stdout) as { filename: string }[];
  if (!packed) throw new Error(`npm pack in ${root} reported no tarball.`);
  return packed.filename;
}
