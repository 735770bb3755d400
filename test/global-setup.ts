/**
 * Builds dist/ once, before any test file runs, when a source file is newer than the last build.
 * Tests that pack provider-kit (init) or run its built CLI read dist/ while others run: a build
 * started by one test file would rewrite it under the others.
 */
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const builtEntry = path.join(root, "dist", "src", "index.js");
const SOURCES = ["src", "examples", "package.json", "tsconfig.json", "tsconfig.build.json"];

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

function builtAt(): number {
  try {
    return statSync(builtEntry).mtimeMs;
  } catch {
    return -1;
  }
}

export default function buildOnce(): void {
  const sources = Math.max(...SOURCES.map((source) => newestChange(path.join(root, source))));
  if (builtAt() >= sources) return;
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: ["ignore", "inherit", "inherit"] });
}
