/**
 * provider-kit is ESM only: a CommonJS `require` of it fails with an error that says so and
 * what to do, not with Node's ERR_PACKAGE_PATH_NOT_EXPORTED. Run as a user hits it: a real .cjs
 * script requiring the package by name from its node_modules.
 */
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { run } from "../../../../test/support/processes.js";

const root = path.resolve(import.meta.dirname, "../..");
let consumer: string;

beforeAll(async () => {
  // A CommonJS project with this package in its node_modules, as npm links a local dependency.
  consumer = await mkdtemp(path.join(os.tmpdir(), "provider-kit-cjs-"));
  await mkdir(path.join(consumer, "node_modules"));
  await symlink(root, path.join(consumer, "node_modules", "provider-kit"), "dir");
  await writeFile(
    path.join(consumer, "require.cjs"),
    [
      "try {",
      "  require(process.argv[2]);",
      '  console.log("loaded");',
      "} catch (error) {",
      "  console.log(JSON.stringify({ code: error.code, message: error.message }));",
      "}",
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  await rm(consumer, { recursive: true, force: true });
});

it.each(["provider-kit", "provider-kit/contract", "provider-kit/store", "provider-kit/cli"])("require(%j) fails, saying the package is ESM only and how to import it", async (specifier) => {
  const result = await run("node", ["require.cjs", specifier], { cwd: consumer });
  expect(result.code, result.stderr).toBe(0);
  const { code, message } = JSON.parse(result.stdout) as { code: string; message: string };
  expect(code).toBe("ERR_REQUIRE_ESM");
  expect(message).toContain("provider-kit is an ES module package (ESM only): it cannot be loaded with require().");
  expect(message).toContain('await import("provider-kit")');
});
