/**
 * Reads a provider's action declarations from one of its modules, for `provider-kit manifest
 * --actions` and `provider-kit check --actions`: the module is imported, nothing is started. A TypeScript module goes through the
 * project's own tsx (projects made by `provider-kit init` have it), so no build is needed first.
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { ActionDeclaration } from "../action-declarations.js";

interface Declared {
  declarations: Readonly<Record<string, ActionDeclaration>>;
}

type TsImport = (specifier: string, parentURL: string) => Promise<Record<string, unknown>>;

interface TsxPackage {
  exports: { "./esm/api": { import: { default: string } } };
}

/** tsx's ESM API as installed for `file` (its CommonJS build cannot import modules). */
async function tsxFor(file: string): Promise<{ tsImport: TsImport }> {
  let manifest: string;
  try {
    manifest = createRequire(file).resolve("tsx/package.json");
  } catch {
    throw new Error(`${file} is TypeScript, and tsx is not installed for it: npm install --save-dev tsx, or give the compiled .js file.`);
  }
  const { exports } = JSON.parse(await readFile(manifest, "utf8")) as TsxPackage;
  return import(pathToFileURL(path.join(path.dirname(manifest), exports["./esm/api"].import.default)).href) as Promise<{ tsImport: TsImport }>;
}

async function importTypeScript(file: string): Promise<Record<string, unknown>> {
  const { tsImport } = await tsxFor(file);
  return tsImport(pathToFileURL(file).href, import.meta.url);
}

/** The export `name` of `file`: what `declareActions(...)` (or its `.implement(...)`) returned. */
export async function loadActions(file: string, name: string): Promise<Declared> {
  const absolute = path.resolve(file);
  const module = /\.[cm]?tsx?$/.test(absolute) ? await importTypeScript(absolute) : ((await import(pathToFileURL(absolute).href)) as Record<string, unknown>);
  const exported = module[name] as Partial<Declared> | undefined;
  if (typeof exported?.declarations !== "object" || exported.declarations === null) {
    throw new Error(`${file} has no export "${name}" made by declareActions(...): export the declarations under that name, or pass --export <name>.`);
  }
  return exported as Declared;
}
