/**
 * End to end, as a service author lives it: `provider-kit init` (the built CLI), provider-kit
 * installed from this checkout's `npm pack` tarball, then the new project type-checks, passes
 * its own tests, starts with `npm start`, passes the conformance CLI and prints its manifest.
 *
 * Slow (npm pack builds the package; npm install fetches the dev tools): ONE generate and
 * install cycle, in beforeAll, serves every check.
 */
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ownPackage from "../../package.json" with { type: "json" };
import { run, startLongRunning, type Finished } from "./processes.js";

const root = path.resolve(import.meta.dirname, "../..");
const cli = path.join(root, "dist", "src", "cli", "main.js");
const SLOW = 300_000;

/** Fails with the command's output, so a broken step says why. */
function expectSuccess(result: Finished): void {
  expect(result.code, `${result.command} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

let work: string;
let project: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "provider-kit-project-"));
  expectSuccess(await run("npm", ["pack", "--pack-destination", work], { cwd: root }));
  const tarball = path.join(work, `provider-kit-${ownPackage.version}.tgz`);

  project = path.join(work, "orders-db");
  expectSuccess(await run("node", [cli, "init", project], { cwd: work }));
  expectSuccess(
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], { cwd: project }),
  );
}, SLOW);

afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Reads a KEY=value setting of the generated project's .env. */
async function dotEnv(key: string): Promise<string> {
  const match = new RegExp(`^${key}=(.*)$`, "m").exec(await readFile(path.join(project, ".env"), "utf8"));
  if (!match?.[1]) throw new Error(`${key} missing from the generated .env`);
  return match[1];
}

describe("a project made by provider-kit init", () => {
  it("type-checks", async () => {
    expectSuccess(await run("npx", ["tsc", "--noEmit"], { cwd: project }));
  }, SLOW);

  it("passes its own tests (HTTP calls and the conformance kit)", async () => {
    const result = await run("npm", ["test"], { cwd: project });
    expectSuccess(result);
    expect(result.stdout).toMatch(/Tests\s+\d+ passed/);
    expect(result.stdout).not.toMatch(/failed|skipped/);
  }, SLOW);

  it("starts with npm start and passes the conformance CLI run against it", async () => {
    const username = await dotEnv("PROVIDER_USERNAME");
    const password = await dotEnv("PROVIDER_PASSWORD");
    // PORT from the environment wins over .env: a free port, so tests never collide.
    const server = startLongRunning("npm", ["start"], { cwd: project, env: { PORT: "0" } });
    try {
      const listening = await server.waitForLine(/"msg":"provider listening"/, 60_000);
      const port = (JSON.parse(listening) as { port: number }).port;

      const check = await run("node", [cli, "check", "--url", `http://127.0.0.1:${port}`, "--username", username], {
        cwd: project,
        env: { PROVIDER_KIT_PASSWORD: password },
      });
      expectSuccess(check);
    } finally {
      await server.stop();
    }
    // SIGTERM stops it cleanly, and the password never reaches its log.
    expect(server.output()).toMatch(/"msg":"stopping"/);
    expect(server.output()).not.toContain(password);
  }, SLOW);

  it("can make the same project again with the installed provider-kit (the package ships its templates)", async () => {
    const again = path.join(work, "orders-db-again");
    expectSuccess(await run("npx", ["provider-kit", "init", again], { cwd: project }));
    const generated = async (dir: string) =>
      (await readdir(dir, { recursive: true })).filter((file) => !/^(node_modules|package-lock\.json)/.test(file)).sort();
    expect(await generated(again)).toEqual(await generated(project));
  }, SLOW);

  it("prints its service manifest with the installed provider-kit", async () => {
    const result = await run("npx", ["provider-kit", "manifest"], { cwd: project });
    expectSuccess(result);
    expect(result.stdout).toBe(await readFile(path.join(project, "service.yaml"), "utf8"));
  }, SLOW);
});
