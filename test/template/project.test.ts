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
import { freePort } from "../../src/redis/server.js";
import { Api } from "../platform/helpers.js";
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

  it("is driven end to end by the installed provider-kit platform: register, instance, bind, the app's env, unbind, remove", async () => {
    const server = startLongRunning("npm", ["start"], { cwd: project, env: { PORT: "0" } });
    const platformPort = await freePort();
    const platform = startLongRunning("npx", ["provider-kit", "platform", "--memory", "--port", String(platformPort)], {
      cwd: project,
      env: { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-password" },
    });
    try {
      const listening = await server.waitForLine(/"msg":"provider listening"/, 60_000);
      const endpoint = `http://127.0.0.1:${(JSON.parse(listening) as { port: number }).port}`;
      const manifest = await run("npx", ["provider-kit", "manifest", "--endpoint", endpoint], { cwd: project });
      expectSuccess(manifest);
      await platform.waitForLine(/listening on/, 60_000);
      const api = await new Api(`http://127.0.0.1:${platformPort}`).login("admin@example.com", "admin-password");
      const serviceId = /^id: (.+)$/m.exec(manifest.stdout)![1]!.replace(/"/g, "");

      await api.ok(api.post("/services", { text: manifest.stdout })); // Variant A: bind-app, then one bind per unit
      await api.ok(api.post("/apps", { json: { name: "orders-web", platform: "node" } }));
      await api.ok(api.put("/apps/orders-web/units", { text: "1" }));
      await api.ok(api.post("/services/instances", { json: { name: "orders", service_name: serviceId } }));
      const bound = (await api.ok(api.put("/services/instances/orders/orders-web"))).json<Record<string, string>>();
      expect(Object.keys(bound).length).toBeGreaterThan(0);
      const seen = await api.ok(api.post("/apps/orders-web/run?once=true", { text: 'printf %s "$TSURU_SERVICES"' }));
      expect(JSON.parse(seen.text)).toEqual({ [serviceId]: [{ instance_name: "orders", envs: bound }] });
      const calls = (await api.get("/provider-calls?app=orders-web")).json<Array<{ path: string; status: number }>>();
      expect(calls.map((call) => `${call.path} ${call.status}`)).toEqual([
        "/resources/orders/bind-app 201",
        "/resources/orders/bind 201",
        "/resources/orders/bind 201",
      ]);
      await api.ok(api.delete("/services/instances/orders/orders-web"));
      await api.ok(api.delete("/services/instances/orders"));
    } finally {
      await platform.stop();
      await server.stop();
    }
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
