/**
 * The docs' table of exports (docs/reference/exports.md) is the whole public API of `provider-kit`, no more and no
 * less: compared with what src/index.ts exports (values and types, read by the TypeScript
 * compiler), so neither can change without the other.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import ts from "typescript";
import { expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "../../../..");

/** Every name src/index.ts exports, with whether it is a value (else a type only). */
function exportsOfIndex(): Map<string, "value" | "type"> {
  const entry = path.join(root, "packages", "provider-kit", "src", "index.ts");
  const { options } = ts.parseJsonConfigFileContent(
    ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile).config,
    ts.sys,
    root,
  );
  const program = ts.createProgram([entry], { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  return new Map(
    checker.getExportsOfModule(module).map((symbol) => {
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return [symbol.name, target.flags & ts.SymbolFlags.Value ? "value" : "type"];
    }),
  );
}

/** The identifiers in code spans of the exports table, by column. */
async function readmeExports(): Promise<{ values: string[]; types: string[] }> {
  const doc = await readFile(path.join(root, "docs/reference/exports.md"), "utf8");
  const section = /^\| part \|.*\n(?:\|.*\n?)*/m.exec(doc)?.[0];
  if (section === undefined) throw new Error('docs/reference/exports.md has no table starting with "| part |".');
  const identifiers = (cell = "") => [...cell.matchAll(/`([A-Za-z_$][\w$]*)`/g)].map((match) => match[1]!);
  const rows = section
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|[-| ]+\|$/.test(line))
    .slice(1) // the header row
    .map((line) => line.split("|").slice(1, -1));
  return { values: rows.flatMap((cells) => identifiers(cells[1])), types: rows.flatMap((cells) => identifiers(cells[2])) };
}

it("lists every export of provider-kit, each once, in its column, and nothing else", async () => {
  const actual = exportsOfIndex();
  const listed = await readmeExports();
  const names = (kind: "value" | "type") => [...actual].filter(([, k]) => k === kind).map(([name]) => name).sort();
  const hint = "docs/reference/exports.md's table must match src/index.ts: add or remove the names that differ";
  expect(listed.values.toSorted(), hint).toEqual(names("value"));
  expect(listed.types.toSorted(), hint).toEqual(names("type"));
  expect(new Set([...listed.values, ...listed.types]).size, "a name listed twice").toBe(listed.values.length + listed.types.length);
});
