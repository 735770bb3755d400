/**
 * The reference pages cannot drift from the code: the options tables list exactly the options
 * the types declare, with the defaults the code uses, and the routes table lists exactly the
 * routes a provider serves, variant by variant.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { pino } from "pino";
import request from "supertest";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { createProvider, DEFAULTS, REGISTRY_DEFAULTS, VARIANTS } from "provider-kit";
import { AUTH, basic, fakeResource, PASSWORD, USER } from "../support/fake-provider.js";

const root = path.resolve(import.meta.dirname, "../..");

/** The rows of the markdown table that follows `heading`, as trimmed cells, header row left out. */
function tableAfter(file: string, heading: string): string[][] {
  const doc = readFileSync(path.join(root, file), "utf8");
  const start = doc.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`${file} has no heading "${heading}"`);
  const table = /^\|.*\n(?:\|.*\n?)*/m.exec(doc.slice(start))?.[0] ?? "";
  return table
    .trim()
    .split("\n")
    .slice(2)
    .map((line) => line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
}

/** The property names an exported interface declares. */
function propertiesOf(file: string, name: string): string[] {
  const program = ts.createProgram([path.join(root, file)], { strict: true, noEmit: true });
  const source = program.getSourceFile(path.join(root, file))!;
  const declaration = source.statements.find((node): node is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(node) && node.name.text === name);
  if (!declaration) throw new Error(`${file} declares no interface ${name}`);
  return declaration.members.map((member) => (member.name as ts.Identifier).text);
}

const code = (cell: string) => /^`([^`]+)`/.exec(cell)?.[1];
/** A default as the docs write it (`60000`, `1 000`, `1048576 (1 MiB)`), as a number. */
const number = (cell: string) => Number(cell.replace(/\(.*\)/, "").replace(/[\s`,_]/g, ""));

describe("docs/reference/options.md", () => {
  it("lists every createProvider option, and the defaults the code uses", () => {
    const rows = tableAfter("docs/reference/options.md", "## `createProvider` options");
    const names = rows.map(([name = ""]) => code(name));
    expect(names.filter((name) => !name?.includes(".")).sort()).toEqual(propertiesOf("packages/provider-kit/src/options.ts", "ProviderOptions").sort());
    const defaultOf = (option: string) => rows.find(([name = ""]) => code(name) === option)?.[1] ?? "";
    expect(number(defaultOf("handlerTimeoutMs"))).toBe(DEFAULTS.handlerTimeoutMs);
    expect(number(defaultOf("bodyLimitBytes"))).toBe(DEFAULTS.bodyLimitBytes);
    expect(number(defaultOf("healthCheckTimeoutMs"))).toBe(DEFAULTS.healthCheckTimeoutMs);
    expect(number(defaultOf("formFieldLimit"))).toBe(DEFAULTS.formFieldLimit);
    expect(defaultOf("requestIdHeader")).toBe(`\`"${DEFAULTS.requestIdHeader}"\``);
    expect(defaultOf("auth.realm")).toBe(`\`"${DEFAULTS.realm}"\``);
  });

  it("lists every registry option, and the defaults the code uses", () => {
    const rows = tableAfter("docs/reference/options.md", "## Registry options");
    expect(rows.map(([name = ""]) => code(name)).sort()).toEqual(propertiesOf("packages/provider-kit/src/lifecycle/options.ts", "RegistryOptions").sort());
    for (const [option, value] of Object.entries(REGISTRY_DEFAULTS)) {
      const row = rows.find(([name = ""]) => code(name) === option);
      expect(number(row?.[1] ?? ""), option).toBe(value);
    }
  });
});

describe("docs/reference/routes.md", () => {
  const rows = tableAfter("docs/reference/routes.md", "## Routes")
    .map(([method = "", route = "", variants = "", handler = ""]) => ({ method, path: code(route) ?? "", variants, handler: code(handler) }))
    .filter(({ path }) => path.startsWith("/resources"));

  /** The path with its parameters filled in, as the platform would send it. */
  const concrete = (template: string) => template.replace(":name", "db1").replace(":job", "job1").replace(":host", "web.example.com");

  it.each(VARIANTS)("lists exactly the routes a provider serves for variant %s", async (variant) => {
    const resource = fakeResource();
    const provider = createProvider(resource.handlers, { auth: AUTH, registry: false, variants: [variant], logger: pino({ level: "silent" }) });
    const served: string[] = [];
    for (const { method, path: template, handler } of rows) {
      const before = resource.received.length;
      const call = request(provider)[method.toLowerCase() as "get"];
      await call(concrete(template))
        .set("Authorization", basic(USER, PASSWORD))
        .type("form")
        .send({ "app-name": "web", "app-host": "web.example.com", hostname: "web.example.com", "unit-host": "10.0.0.9", name: "db1" });
      // Served by the documented handler, not by another route that happens to match the path.
      if (resource.received.slice(before).some((call) => call.handler === handler)) served.push(`${method} ${template}`);
    }
    const documented = rows.filter(({ variants }) => variants.split(/,\s*/).includes(variant) || variants.startsWith("all"));
    expect(served.sort()).toEqual(documented.map(({ method, path: template }) => `${method} ${template}`).sort());
    await provider.close();
  });
});
