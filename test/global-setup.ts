/**
 * Builds the packages' dist/ once, before any test file runs, when a source file is newer than
 * the last build. Tests that pack the packages (init) or run the built CLI read dist/ while others
 * run: a build started by one test file would rewrite it under the others.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
/** Each package the root's `npm run build` builds, with a file its build writes. */
const BUILDS = [
  ["packages/provider-kit", "dist/index.js"],
  ["packages/redis-store", "dist/index.js"],
  ["packages/conformance", "dist/conformance/index.js"],
  ["packages/platform", "dist/platform/platform.js"],
  ["examples/redis", "dist/main.js"],
].map(([dir, built]) => ({ dir: path.join(root, dir!), built: path.join(root, dir!, built!) }));

function newestChange(file: string): number {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(file)) {
    if (["node_modules", "dist", "docs", "test"].includes(entry)) continue;
    newest = Math.max(newest, newestChange(path.join(file, entry)));
  }
  return newest;
}

function builtAt(file: string): number {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildOnce(): void {
  // A package's sources: its folder but its node_modules, its build's output (dist/, the docs the
  // conformance package copies) and its tests; the root's tsconfig.json
  // and the repository's docs/, which provider-kit and the conformance kit ship copies of.
  const sources = (dir: string) => Math.max(newestChange(path.join(root, "tsconfig.json")), newestChange(path.join(root, "docs")), newestChange(dir));
  if (BUILDS.every(({ dir, built }) => builtAt(built) >= sources(dir))) return;
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}
