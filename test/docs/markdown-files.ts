/**
 * The Markdown pages of the repository that readers follow: the README, CONTRIBUTING, every page
 * under docs/ and the examples' READMEs. Shared by the doc tests (links, commands).
 */
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** Every file under `dir` whose name passes `keep`, as absolute paths. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const file = path.join(dir, entry);
    if (statSync(file).isDirectory()) return entry === "node_modules" ? [] : filesUnder(file, keep);
    return keep(entry) ? [file] : [];
  });
}

/** The pages, as absolute paths. */
export const DOC_PAGES: readonly string[] = [
  path.join(ROOT, "README.md"),
  path.join(ROOT, "CONTRIBUTING.md"),
  ...filesUnder(path.join(ROOT, "examples"), (name) => name === "README.md"),
  ...filesUnder(path.join(ROOT, "docs"), (name) => name.endsWith(".md")),
];
