/**
 * Builds the packages' dist/ once, before any test file runs, when a source file is newer than
 * the last build. Tests that pack the packages (init) or run the built CLI read dist/ while others
 * run: a build started by one test file would rewrite it under the others.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const PACKAGES = ["provider-kit", "redis-store", "conformance", "platform"].map((name) => path.join(root, "packages", name));

function newestChange(file: string): number {
  const stat = statSync(file);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(file)) {
    if (entry === "node_modules") continue;
    newest = Math.max(newest, newestChange(path.join(file, entry)));
  }
  return newest;
}

/** When the package was last built: its built main entry (package.json "main"), -1 when absent. */
function builtAt(dir: string): number {
  const { main } = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { main: string };
  try {
    return statSync(path.join(dir, main)).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildOnce(): void {
  const sources = (dir: string) =>
    Math.max(...[path.join(root, "tsconfig.json"), ...["src", "package.json", "tsconfig.build.json"].map((file) => path.join(dir, file))].map(newestChange));
  if (PACKAGES.every((dir) => builtAt(dir) >= sources(dir))) return;
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}
