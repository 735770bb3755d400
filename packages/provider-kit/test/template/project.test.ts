/**
 * End to end, exactly as a service author lives it: `provider-kit init` from the built CLI in a
 * temporary folder, then plain `npm install` (provider-kit comes from the copy init packs into
 * vendor/, so it installs although provider-kit is not on the npm registry), then `npm test`,
 * `npm start` and `npx provider-kit check` against it. Then the same again outside a checkout:
 * `npx provider-kit init` from the provider-kit installed in that project. The project gets
 * provider-kit's packages from vendor/ as well: the Redis registry, the conformance kit and the
 * platform that `provider-kit dev` runs. A hand-made project with provider-kit alone is told which
 * package `platform` and `dev` need.
 *
 * Slow (npm install fetches the dev tools): ONE generate and install cycle, in beforeAll,
 * serves every check.
 */
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ownPackage from "../../package.json" with { type: "json" };
import { Api } from "../../../../test/support/platform-api.js";
import { execFile, spawn } from "node:child_process";
import { promisify } from "node:util";
import { childEnv, processGroupAlive, run, startLongRunning, type Finished } from "../../../../test/support/processes.js";
import { eventually } from "../../../../test/support/eventually.js";
import { startRedisServer } from "../../../../test/support/redis-server.js";
import { deadLinksFrom } from "../../../../test/support/markdown-links.js";

const root = path.resolve(import.meta.dirname, "../..");
const cli = path.join(root, "dist", "cli", "main.js");
const SLOW = 300_000;
const VENDORED = `file:vendor/provider-kit-${ownPackage.version}.tgz`;

/** Fails with the command's output, so a broken step says why. */
function expectSuccess(result: Finished): void {
  expect(result.code, `${result.command} failed:\n${result.stdout}\n${result.stderr}`).toBe(0);
}

/** `npm test` in `dir`: passes, every test run. */
async function expectTestsPass(dir: string): Promise<void> {
  const result = await run("npm", ["test"], { cwd: dir });
  expectSuccess(result);
  expect(result.stdout).toMatch(/Tests\s+\d+ passed/);
  expect(result.stdout).not.toMatch(/failed|skipped/);
}

/** Where the project's installed `pkg` came from, according to its package-lock.json. */
async function installedFrom(dir: string, pkg = "provider-kit"): Promise<string | undefined> {
  const lock = JSON.parse(await readFile(path.join(dir, "package-lock.json"), "utf8")) as { packages: Record<string, { resolved?: string }> };
  return lock.packages[`node_modules/${pkg}`]?.resolved;
}

let work: string;
let project: string;

beforeAll(async () => {
  work = await mkdtemp(path.join(os.tmpdir(), "provider-kit-project-"));
  // The built CLI, from the current sources: test/global-setup.ts built it before any file ran.
  project = path.join(work, "orders-db");
  expectSuccess(await run("node", [cli, "init", project], { cwd: work }));
  expectSuccess(await run("npm", ["install"], { cwd: project }));
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
  it("installs provider-kit and its packages from its own vendor/ copies, not from the npm registry", async () => {
    expect(await installedFrom(project)).toBe(VENDORED);
    for (const name of ["redis-store", "conformance", "platform"]) {
      expect(await installedFrom(project, `@provider-kit/${name}`)).toBe(`file:vendor/provider-kit-${name}-${ownPackage.version}.tgz`);
    }
    const installed = JSON.parse(await readFile(path.join(project, "node_modules", "provider-kit", "package.json"), "utf8")) as { version: string };
    expect(installed.version).toBe(ownPackage.version);
  });

  it("gets the ESM-only error from require(\"provider-kit\") in CommonJS, and provider-kit itself from import()", async () => {
    const script = [
      'try { require("provider-kit"); } catch (error) { console.log(error.code); }',
      'import("provider-kit").then((kit) => console.log(typeof kit.createProvider));',
    ].join("\n");
    const result = await run("node", ["--input-type=commonjs", "-e", script], { cwd: project });
    expectSuccess(result);
    expect(result.stdout).toBe("ERR_REQUIRE_ESM\nfunction\n");
  });

  it("type-checks", async () => {
    expectSuccess(await run("npx", ["tsc", "--noEmit"], { cwd: project }));
  }, SLOW);

  it("passes its own tests (HTTP calls and the conformance kit)", async () => {
    await expectTestsPass(project);
  }, SLOW);

  it("starts with npm start and passes `npx provider-kit check` run against it", async () => {
    const username = await dotEnv("PROVIDER_USERNAME");
    const password = await dotEnv("PROVIDER_PASSWORD");
    // PORT from the environment wins over .env: a free port, so tests never collide.
    const server = startLongRunning("npm", ["start"], { cwd: project, env: { PORT: "0" } });
    try {
      const listening = await server.waitForLine(/"msg":"provider listening"/, 60_000);
      const port = (JSON.parse(listening) as { port: number }).port;

      // As the project's README runs it: its actions, and an instance of every plan (large is set up in the background).
      for (const plan of ["small", "large"]) {
        const check = await run(
          "npx",
          ["provider-kit", "check", "--url", `http://127.0.0.1:${port}`, "--username", username, "--actions", "src/actions.ts", "--plan", plan],
          { cwd: project, env: { PROVIDER_KIT_PASSWORD: password } },
        );
        expectSuccess(check);
        expect(check.stdout).toMatch(/✓ pass {2}MUST {3}actions\.exists /);
      }
    } finally {
      await server.stop();
    }
    // .env's REGISTRY_STORE=memory is warned of, with the setting to change rather than code.
    expect(server.output()).toMatch(/"msg":"The registry is a MemoryStore: .* For production, set REGISTRY_STORE to a Redis URL/);
    // SIGTERM stops it cleanly, and the password never reaches its log.
    expect(server.output()).toMatch(/"msg":"stopping"/);
    expect(server.output()).not.toContain(password);
  }, SLOW);

  it("runs the CI workflow init ships: its steps start the provider and pass the kit for every plan", async () => {
    const workflow = await readFile(path.join(project, ".github/workflows/conformance.yml"), "utf8");
    // The plans come from the provider, not from names repeated in the workflow.
    expect(workflow).not.toMatch(/\b(small|large)\b/);
    // The job's env, its fixed port swapped for one of this test's.
    const env = { PORT: "43151" };
    const envFile = path.join(project, ".env");
    const settings = await readFile(envFile, "utf8");
    // As GitHub runs a step; detached, so the provider it leaves running can be stopped as a group.
    const bash = (script: string) => ["--noprofile", "--norc", "-eo", "pipefail", "-c", script];
    const starting = spawn("bash", bash(stepScript(workflow, "Start the provider")), { cwd: project, env: childEnv(env), detached: true, stdio: "ignore" });
    try {
      expect(await new Promise((resolve) => starting.once("close", resolve))).toBe(0);
      const check = await run("bash", bash(stepScript(workflow, "Check it with the conformance kit")), { cwd: project, env });
      expectSuccess(check);
      for (const plan of ["small", "large"]) {
        const report = await readFile(path.join(project, `conformance-${plan}.xml`), "utf8");
        expect(report).toContain('name="actions.exists [MUST]"');
        expect(report).not.toContain("<failure");
      }
    } finally {
      process.kill(-starting.pid!, "SIGTERM");
      await eventually(async () => (await fetch("http://127.0.0.1:43151/resources/plans").then(() => false, () => true)) || undefined);
      await writeFile(envFile, settings, { mode: 0o600 });
      await Promise.all(["conformance-small.xml", "conformance-large.xml", "provider.log"].map((file) => rm(path.join(project, file), { force: true })));
    }
  }, SLOW);

  it("has no dead end: every link in the project and in the docs it leads to opens, every file it names exists, and so does every line the kit's advice cites", async () => {
    const own = (await readdir(project, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(project, path.join(entry.parentPath, entry.name)))
      .filter((file) => !/^(node_modules|vendor)\/|^package-lock\.json$/.test(file));
    // Markdown links, followed into the docs the installed packages ship.
    const pages = own.filter((file) => file.endsWith(".md")).map((file) => path.join(project, file));
    expect(pages).toContain(path.join(project, "README.md"));
    expect(deadLinksFrom(pages, project)).toEqual([]);
    // Files the sources, tests and settings name: from the project's root or the naming file's folder.
    const missing: string[] = [];
    for (const file of own) {
      for (const [, named = ""] of (await readFile(path.join(project, file), "utf8")).matchAll(/(?<![\w./-])((?:[\w-]+\/)*[\w.-]+\.(?:ts|md))\b/g)) {
        const places = [path.join(project, named), path.join(project, path.dirname(file), named)];
        if (!(await Promise.all(places.map((place) => stat(place).then(() => true, () => false)))).includes(true)) missing.push(`${file}: ${named}`);
      }
    }
    expect(missing).toEqual([]);

    // The kit's advice, from a provider that fails: each cited line, opened from the project as the user would.
    const broken = createServer((_request, response) => response.writeHead(500, { "content-type": "text/plain" }).end("Broken on purpose."));
    await new Promise<void>((resolve) => broken.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(broken.address() as AddressInfo).port}`;
      const check = await run("npx", ["provider-kit", "check", "--url", url, "--username", "u"], { cwd: project, env: { PROVIDER_KIT_PASSWORD: "p" } });
      expect(check.code, check.stderr).toBe(1);
      const cited = [...check.stdout.matchAll(/^ +(change|rule): .*?([\w@./-]+\.md):(\d+)(?:\)| "(.*)")?$/gm)];
      expect(cited.map(([, kind]) => kind)).toEqual(expect.arrayContaining(["change", "rule"]));
      for (const [line, , file = "", number = "", quote] of cited) {
        const text = await readFile(path.join(project, file), "utf8").catch(() => undefined);
        expect(text, `${line.trim()}: no such file from the project`).toBeDefined();
        const cites = text!.split("\n")[Number(number) - 1];
        expect(cites, `${line.trim()}: no such line`).toBeDefined();
        if (quote !== undefined) expect(cites).toContain(quote.replace(/\.\.\.$/, ""));
      }
    } finally {
      await new Promise((resolve) => broken.close(resolve));
    }
  }, SLOW);

  it("leaves no process behind when npm alone gets SIGTERM (what a supervisor that signals npm does)", async () => {
    const server = startLongRunning("npm", ["start"], { cwd: project, env: { PORT: "0" } });
    try {
      await server.waitForLine(/"msg":"provider listening"/, 60_000);
      server.signal("SIGTERM");
      await eventually(() => !server.groupAlive(), 20_000, "npm start and everything it started gone");
      expect(server.output()).toMatch(/"msg":"stopping"/);
    } finally {
      await server.stop();
    }
  }, SLOW);

  it("in a hand-made project with provider-kit alone, says which package `platform` and `dev` need, and exits 2", async () => {
    const bare = path.join(work, "bare");
    await mkdir(bare);
    await writeFile(path.join(bare, "package.json"), JSON.stringify({ name: "bare", private: true, type: "module" }));
    const tarball = path.join(project, VENDORED.slice("file:".length));
    expectSuccess(await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", tarball], { cwd: bare }));
    // A hand-written provider on a MemoryStore is pointed at the Redis store's page as shipped, a path that opens from here.
    const warned = await run("node", ["--input-type=module", "-e", 'import { MemoryStore } from "provider-kit"; console.log(await new MemoryStore().persistenceWarning());'], { cwd: bare });
    expectSuccess(warned);
    expect(warned.stdout).toContain("such as RedisStore from @provider-kit/redis-store (node_modules/provider-kit/docs/operations/redis-store.md).");
    expect((await stat(path.join(bare, "node_modules/provider-kit/docs/operations/redis-store.md"))).isFile()).toBe(true);
    const result = await run("npx", ["provider-kit", "platform", "--memory"], { cwd: bare });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("provider-kit platform needs the @provider-kit/platform package: npm install --save-dev @provider-kit/platform");
    const help = await run("npx", ["provider-kit", "--help"], { cwd: bare });
    expect(help.stdout).toMatch(/platform .*\(needs @provider-kit\/platform\)/s);
    const dev = await run("npx", ["provider-kit", "dev"], { cwd: bare });
    expect([dev.code, dev.stderr]).toEqual([2, expect.stringContaining("provider-kit dev needs the @provider-kit/platform package")]);
  }, SLOW);

  it("is driven end to end by the installed provider-kit platform: register, instance, bind, the app's env, unbind, remove", async () => {
    const server = startLongRunning("npm", ["start"], { cwd: project, env: { PORT: "0" } });
    const platform = startLongRunning("npx", ["provider-kit", "platform", "--memory", "--port", "0", "--allow-run"], {
      cwd: project,
      env: { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-password" },
    });
    try {
      const listening = await server.waitForLine(/"msg":"provider listening"/, 60_000);
      const endpoint = `http://127.0.0.1:${(JSON.parse(listening) as { port: number }).port}`;
      const manifest = await run("npx", ["provider-kit", "manifest", "--endpoint", endpoint], { cwd: project });
      expectSuccess(manifest);
      const api = await new Api(await platform.waitForUrl(/listening on/, 60_000)).login("admin@example.com", "admin-password");
      const serviceId = /^id: (.+)$/m.exec(manifest.stdout)![1]!.replace(/"/g, "");

      await api.ok(api.post("/services", { text: manifest.stdout })); // Variant A: bind-app, then one bind per unit
      await api.ok(api.post("/apps", { json: { name: "orders-web", platform: "node" } }));
      await api.ok(api.put("/apps/orders-web/units", { text: "1" }));
      await api.ok(api.post("/services/instances", { json: { name: "orders", service_name: serviceId } }), 201);
      const bound = (await api.ok(api.put("/services/instances/orders/orders-web"))).json<Record<string, string>>();
      expect(Object.keys(bound).length).toBeGreaterThan(0);
      const seen = await api.ok(api.post("/apps/orders-web/run?once=true", { text: 'printf %s "$TSURU_SERVICES"' }));
      const services = JSON.parse(seen.text) as Record<string, Array<{ instance_name: string; envs: Record<string, string> }>>;
      expect(services[serviceId]!.map(({ instance_name, envs }) => [instance_name, Object.keys(envs)])).toEqual([["orders", Object.keys(bound)]]);
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


  it("makes the same project again with the installed provider-kit, which installs and passes its tests too", async () => {
    // Outside a checkout: the provider-kit in node_modules packs itself into the new project.
    const again = path.join(work, "orders-db-again");
    expectSuccess(await run("npx", ["provider-kit", "init", again], { cwd: project }));
    const generated = async (dir: string) =>
      (await readdir(dir, { recursive: true })).filter((file) => !/^(node_modules|package-lock\.json)/.test(file)).sort();
    expect(await generated(again)).toEqual(await generated(project));

    // The installed package packs into the very tarball the checkout packed.
    const tarball = VENDORED.slice("file:".length);
    expect(await readFile(path.join(again, tarball))).toEqual(await readFile(path.join(project, tarball)));

    expectSuccess(await run("npm", ["install"], { cwd: again }));
    expect(await installedFrom(again)).toBe(VENDORED);
    await expectTestsPass(again);
  }, SLOW);

  it("prints its service manifest with the installed provider-kit", async () => {
    const result = await run("npx", ["provider-kit", "manifest"], { cwd: project });
    expectSuccess(result);
    expect(result.stdout).toBe(await readFile(path.join(project, "service.yaml"), "utf8"));
  }, SLOW);

  it("prints the platform's manifest of its actions from src/actions.ts, through its own tsx", async () => {
    const result = await run("npx", ["provider-kit", "manifest", "--actions", "src/actions.ts"], { cwd: project });
    expectSuccess(result);
    expect(JSON.parse(result.stdout)).toEqual({
      enabled: true,
      strict_actions: true,
      legacy_compat: false,
      operations: [{ method: "POST", path: "/allowed-hosts", action: "hosts.allow" }],
    });
  }, SLOW);

  it("restarts on a change to src/ under npm run dev", async () => {
    const listening = /"msg":"provider listening"/;
    const main = path.join(project, "src", "main.ts");
    const source = await readFile(main, "utf8");
    const server = startLongRunning("npm", ["run", "dev"], { cwd: project, env: { PORT: "0" } });
    try {
      await server.waitForLine(listening, 60_000);
      await writeFile(main, `${source}\n`);
      const starts = () => server.output().split("\n").filter((line) => listening.test(line)).length;
      await eventually(() => starts() === 2, 60_000, "listening again after the change");
    } finally {
      await server.stop();
      await writeFile(main, source);
    }
  }, SLOW);

  it("runs on a local platform with `provider-kit dev`: registered, reloaded on a handler's change, all stopped by Ctrl-C", async () => {
    const handlers = path.join(project, "src", "handlers.ts");
    const source = await readFile(handlers, "utf8");
    const admin = { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-password" };
    // PORT=0: dev picks the provider a free port (the project's .env names a fixed one).
    const dev = startLongRunning("npx", ["provider-kit", "dev", "--port", "0"], { cwd: project, env: { ...admin, PORT: "0" } });
    const providerPids = () => [...dev.output().matchAll(/^dev: provider (?:started|restarted) \(pid (\d+)\)/gm)].map((match) => Number(match[1]));
    try {
      const api = await new Api(await dev.waitForUrl(/^Console: /, 120_000)).login(admin.PLATFORM_ADMIN_EMAIL, admin.PLATFORM_ADMIN_PASSWORD);
      expect(await dev.waitForLine(/^tsuru: /, 1_000)).toContain(`tsuru target-add dev ${api.url} -s`);
      const serviceId = "orders-db";
      const plans = async () => (await api.get(`/services/${serviceId}/plans`)).json<Array<{ name: string; description: string }>>();
      // The plans come from the provider, which may still be starting.
      expect(await eventually(async () => ((await plans()).length > 0 ? plans() : undefined), 120_000, "the provider's plans")).toEqual([
        { name: "small", description: "Shared database, 1 GB." },
        { name: "large", description: "Dedicated database, 20 GB, set up in the background." },
      ]);
      expect((await api.ok(api.get("/apps"))).json<Array<{ Name: string }>>().map((app) => app.Name)).toEqual(["demo"]);
      expect((await api.ok(api.get(`/1.31/services/${serviceId}/manifest`))).json()).toMatchObject({
        enabled: true,
        operations: [{ method: "POST", path: "/allowed-hosts", action: "hosts.allow" }],
      });

      // The readable log names each call's request id, which a 500 answer names for the operator to look up.
      const providerPort = Number(/provider listening .*"port":(\d+)/.exec(dev.output())?.[1]);
      expect((await fetch(`http://127.0.0.1:${providerPort}/resources/plans`, { headers: { "X-Request-ID": "newcomer-42-lookup" } })).status).toBe(401);
      await eventually(() => dev.output().includes('"requestId":"newcomer-42-lookup"'), 30_000, "the call's request id in dev's log");

      // An instance made before a restart is still up after it: dev keeps the registry (and the stand-in's databases).
      await api.ok(api.post("/services/instances", { json: { name: "orders-1", service_name: serviceId, plan: "small", owner: "dev" } }), 201);

      // Saved as sed -i saves: a new file renamed over the old one.
      await promisify(execFile)("sed", ["-i", "s/Shared database, 1 GB\\./Shared database, 2 GB./", handlers]);
      await eventually(async () => (await plans()).some((plan) => plan.description === "Shared database, 2 GB."), 120_000, "the edited plan served");
      expect(dev.output()).toMatch(/^dev: src\/handlers\.ts changed: restarting the provider$/m);
      await eventually(() => providerPids().length >= 2, 30_000, "the restarted provider's line");
      expect((await api.get("/services/instances/orders-1/status")).text).toBe('Service instance "orders-1" is up');

      // A restart that fails is said so; the platform keeps running, and the next change starts the provider again.
      const edited = source.replace("Shared database, 1 GB.", "Shared database, 3 GB.");
      await writeFile(handlers, `${edited}\nthis line does not parse;\n`);
      expect(await dev.waitForLine(/^dev: the provider failed to start/, 120_000)).toContain("fix what its output says");
      await api.ok(api.get("/apps"));
      await writeFile(handlers, edited);
      await eventually(async () => (await plans()).some((plan) => plan.description === "Shared database, 3 GB."), 120_000, "the fixed handler served");

      // A change to .env restarts the provider with its settings read again, but for the credentials the service was registered with.
      const lines = (pattern: RegExp) => dev.output().split("\n").filter((line) => pattern.test(line)).length;
      const failures = lines(/^dev: the provider failed to start/);
      const envFile = path.join(project, ".env");
      const settings = await readFile(envFile, "utf8");
      await writeFile(envFile, settings.replace("REGISTRY_STORE=memory", "REGISTRY_STORE=nowhere").replace(/^PROVIDER_PASSWORD=.*$/m, "PROVIDER_PASSWORD=edited-secret-4x7q"));
      try {
        await eventually(() => lines(/^dev: the provider failed to start/) > failures, 120_000, "the restart with the edited .env failing");
        expect(dev.output()).toMatch(/^dev: \.env changed: restarting the provider$/m);
        expect(dev.output()).toContain("REGISTRY_STORE must be a Redis URL");
        expect(dev.output()).toContain("PROVIDER_PASSWORD changed in .env: the platform keeps the one the service was registered with");
        expect(dev.output()).not.toContain("edited-secret-4x7q");
      } finally {
        await writeFile(envFile, settings);
      }
      const restarts = providerPids().length;
      await eventually(() => providerPids().length > restarts, 120_000, "the provider restarted with .env as it was");
      // Still called with the registered password.
      expect((await plans()).map((plan) => plan.description)).toContain("Shared database, 3 GB.");

      dev.signalGroup("SIGINT");
      await eventually(() => !dev.groupAlive() && !providerPids().some(processGroupAlive), 60_000, "dev, the platform and every provider it started gone");
      expect(dev.output()).toContain("dev: stopping the provider and the platform");
    } finally {
      await dev.stop();
      for (const pid of providerPids()) if (processGroupAlive(pid)) process.kill(-pid, "SIGKILL");
      await writeFile(handlers, source);
    }
  }, SLOW);

  // Last: it leaves dist/ in the project, which the test making the project again would see.
  it("builds, and the compiled provider runs with its settings from the environment and its registry on Redis", async () => {
    expectSuccess(await run("npm", ["run", "build"], { cwd: project }));
    const username = await dotEnv("PROVIDER_USERNAME");
    const password = await dotEnv("PROVIDER_PASSWORD");
    const redis = await startRedisServer();
    const redisUrl = redis.url;
    // As docs/operations/running.md shows it: node, not npm (which reads .env).
    const server = startLongRunning("node", ["dist/main.js"], {
      cwd: project,
      env: { PORT: "0", PROVIDER_USERNAME: username, PROVIDER_PASSWORD: password, REGISTRY_STORE: redisUrl },
    });
    try {
      const port = (JSON.parse(await server.waitForLine(/"msg":"provider listening"/, 60_000)) as { port: number }).port;
      const created = await fetch(`http://127.0.0.1:${port}/resources`, {
        method: "POST",
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
        body: new URLSearchParams({ name: "orders-compiled", team: "t" }),
      });
      expect(created.status).toBe(201);
      const registry = await createClient({ url: redisUrl }).connect();
      try {
        expect(await registry.keys("*orders-compiled*")).not.toEqual([]);
      } finally {
        registry.destroy();
      }
    } finally {
      await server.stop();
      await redis.stop();
    }
  }, SLOW);
});

/** The `run: |` script of the workflow's step named `name`, as GitHub hands it to bash. */
function stepScript(workflow: string, name: string): string {
  const lines = workflow.split("\n");
  const step = lines.findIndex((line) => line.trim() === `- name: ${name}`);
  const start = lines.findIndex((line, index) => index > step && line.trim() === "run: |") + 1;
  if (step < 0 || start === 0) throw new Error(`The workflow has no step "${name}" with a run script.`);
  const indent = lines[start]!.search(/\S/);
  const script: string[] = [];
  for (const line of lines.slice(start)) {
    if (line.trim() !== "" && line.search(/\S/) < indent) break;
    script.push(line.slice(indent));
  }
  return script.join("\n");
}
