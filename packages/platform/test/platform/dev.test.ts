/**
 * `provider-kit dev` as a process, on a project made of the template's sources (no npm install:
 * its node_modules is a link to the workspace's): every kind of save restarts the provider, which
 * serves the change; a change out of the project through a link does not. The provider's registry
 * outlives its restarts (a redis-server dev runs, stopped with dev, even by kill -9), and dev
 * says when a provider forgot the platform's instances anyway.
 */
import { execFile } from "node:child_process";
import { appendFile, cp, mkdir, mkdtemp, readFile, rename, rm, symlink, unlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { processGroupAlive, startLongRunning, type LongRunning } from "../../../../test/support/processes.js";
import { eventually } from "../../../../test/support/eventually.js";
import { isAlive } from "../../src/redis/process.js";
import { Api } from "./helpers.js";

const ROOT = resolve(import.meta.dirname, "../../../..");
const TEMPLATE = join(ROOT, "packages/provider-kit/templates/provider");
const DEV = ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "dev", "--port", "0"];
const SERVICE = "orders-db";
const PASSWORD = "dev-test-password-1";
/** How long a save may take to be served on a loaded machine (the inner loop's promise is 10 s when idle). */
const SERVED_MS = 60_000;
const ADMIN = { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-password" };

let work: string;
let project: string;
let handlers: string;
let dev: LongRunning | undefined;

/** The template's sources with a start script like the template's, run from the workspace's sources. */
async function makeProject(): Promise<void> {
  work = await mkdtemp(join(tmpdir(), "provider-kit-dev-"));
  project = join(work, SERVICE);
  await cp(join(TEMPLATE, "src"), join(project, "src"), { recursive: true });
  await symlink(join(ROOT, "node_modules"), join(project, "node_modules"));
  const pkg = {
    name: SERVICE,
    private: true,
    type: "module",
    providerKit: { serviceId: SERVICE },
    scripts: { start: "node --conditions=source --env-file=.env --import tsx src/main.ts" },
  };
  await writeFile(join(project, "package.json"), JSON.stringify(pkg, null, 2));
  await writeFile(join(project, ".env"), `PROVIDER_USERNAME=${SERVICE}\nPROVIDER_PASSWORD=${PASSWORD}\nREGISTRY_STORE=memory\n`);
  handlers = join(project, "src", "handlers.ts");
}

beforeAll(makeProject);
afterEach(async () => {
  await dev?.stop();
  dev = undefined;
});
afterAll(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

/** Starts dev in the project; resolves with the provider's address once it answers. */
async function startDev(): Promise<string> {
  dev = startLongRunning(process.execPath, [...DEV, "--dir", project], { cwd: ROOT, env: ADMIN });
  const endpoint = /on (http:\/\/127\.0\.0\.1:\d+)$/.exec(await dev.waitForLine(/^dev: provider started/, 60_000))?.[1];
  if (endpoint === undefined) throw new Error(`dev named no provider address:\n${dev.output()}`);
  await dev.waitForLine(/^dev: provider answers on /, 60_000);
  return endpoint;
}

/** The platform's API, as dev's admin. */
async function platformApi(): Promise<Api> {
  const url = await dev!.waitForUrl(/^Console: /, 60_000);
  return new Api(url).login(ADMIN.PLATFORM_ADMIN_EMAIL, ADMIN.PLATFORM_ADMIN_PASSWORD);
}

/** The pid of the registry's redis-server, as dev's data folder records it. */
async function registryPid(): Promise<number> {
  return Number.parseInt(await readFile(join(project, ".provider-kit", "dev", "registry", "redis.pid"), "utf8"), 10);
}

/** The addresses something listens on at `port` (Linux's socket tables, hex as the kernel writes them). */
async function listenersOn(port: number): Promise<string[]> {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const tables = await Promise.all(["/proc/net/tcp", "/proc/net/tcp6"].map((table) => readFile(table, "utf8").catch(() => "")));
  return tables
    .flatMap((table) => table.split("\n").slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === "0A")
    .map((fields) => fields[1]!.split(":")[0]!);
}

/** Makes a restart by a change in place, and resolves once the restarted provider answers. */
async function restartProvider(): Promise<void> {
  const restarted = () => (dev?.output() ?? "").split("\n").filter((line) => line.startsWith("dev: provider restarted")).length;
  const before = restarted();
  await appendFile(handlers, "\n");
  await eventually(() => restarted() > before, SERVED_MS, "the provider restarted");
}

/** The small plan's description, as the provider serves it now. */
async function smallPlan(endpoint: string): Promise<string | undefined> {
  const answer = await fetch(`${endpoint}/resources/plans`, { headers: { authorization: `Basic ${Buffer.from(`${SERVICE}:${PASSWORD}`).toString("base64")}` } });
  const plans = (await answer.json()) as Array<{ name: string; description: string }>;
  return plans.find((plan) => plan.name === "small")?.description;
}

const restartLines = () => (dev?.output() ?? "").split("\n").filter((line) => /^dev: .*: restarting the provider$/.test(line));

describe("provider-kit dev", () => {
  it("restarts on every kind of save, each served, and says which file changed", async () => {
    const endpoint = await startDev();
    const served = async (description: string) => eventually(async () => (await smallPlan(endpoint)) === description, SERVED_MS, `"${description}" served`);
    const said = (line: string) => eventually(() => restartLines().includes(`dev: ${line}: restarting the provider`), SERVED_MS, `dev saying "${line}"`);
    await served("Shared database, 1 GB.");

    // Three saves by renaming over the file, as sed -i does (a new inode each time), then one in place.
    for (const size of [2, 3, 4]) {
      await promisify(execFile)("sed", ["-i", `s/Shared database, [0-9]* GB\\./Shared database, ${size} GB./`, handlers]);
      await served(`Shared database, ${size} GB.`);
    }
    await said("src/handlers.ts changed");
    const source = await readFile(handlers, "utf8");
    await appendFile(handlers, `PLANS[0]!.description = "Shared database, 5 GB.";\n`);
    await served("Shared database, 5 GB.");

    // Deleted, then written again.
    await unlink(handlers);
    await writeFile(handlers, source.replace("4 GB.", "6 GB."));
    await served("Shared database, 6 GB.");

    // A new file in a new folder, then that file removed.
    await mkdir(join(project, "src", "lib"));
    await writeFile(join(project, "src", "lib", "extra.ts"), "export const extra = 1;\n");
    await said("src/lib/extra.ts added");
    await unlink(join(project, "src", "lib", "extra.ts"));
    await said("src/lib/extra.ts removed");

    // An editor's safe write: a temporary file renamed over the original; only the original is named.
    const before = restartLines().length;
    await writeFile(`${handlers}.tmp-1234`, source.replace("4 GB.", "7 GB."));
    await rename(`${handlers}.tmp-1234`, handlers);
    await served("Shared database, 7 GB.");
    await eventually(() => restartLines().length > before, SERVED_MS, "the restart line");
    expect(restartLines().slice(before)).toEqual(["dev: src/handlers.ts changed: restarting the provider"]);
  });

  it("does not follow a link out of the project, nor restart for what changes there", async () => {
    const outside = join(work, "outside");
    await mkdir(outside, { recursive: true });
    await symlink(outside, join(project, "src", "linked"));
    await startDev();
    // A change inside, and one through the link at once: the restart is for the first alone.
    await appendFile(handlers, "\n");
    await writeFile(join(outside, "elsewhere.ts"), "export const elsewhere = 1;\n");
    await eventually(() => restartLines().length > 0, SERVED_MS, "a restart");
    await dev?.waitForLine(/^dev: provider restarted/, SERVED_MS);
    expect(restartLines()).toEqual(["dev: src/handlers.ts changed: restarting the provider"]);
    await rm(join(project, "src", "linked"));
  });

  it("keeps the registry and the stand-in's databases across a restart: the instance stays up; the provider listens on loopback only", async () => {
    const endpoint = await startDev();
    const api = await platformApi();
    expect(dev!.output()).toMatch(/^dev: registry: a redis-server in \.provider-kit\/dev, given to the provider as REGISTRY_STORE/m);
    expect(await listenersOn(Number(new URL(endpoint).port))).toEqual(["0100007F"]);
    await api.ok(api.post("/services/instances", { json: { name: "orders", service_name: SERVICE, plan: "small", owner: "dev" } }), 201);
    const status = async () => (await api.get("/services/instances/orders/status")).text;
    expect(await status()).toBe('Service instance "orders" is up');

    await restartProvider();
    expect(await status()).toBe('Service instance "orders" is up');
    expect(dev!.output()).not.toContain("does not know");

    // Ctrl-C stops the registry's server with the rest.
    const redis = await registryPid();
    expect(isAlive(redis)).toBe(true);
    dev!.signalGroup("SIGINT");
    await eventually(() => !dev!.groupAlive() && !isAlive(redis), 60_000, "dev and its redis-server gone");
  });

  it("leaves neither the provider nor the redis-server behind when dev is killed with SIGKILL", async () => {
    await startDev();
    const provider = Number(/\(pid (\d+)\)/.exec(await dev!.waitForLine(/^dev: provider started/, 1_000))?.[1]);
    const redis = await registryPid();
    expect([isAlive(redis), processGroupAlive(provider)]).toEqual([true, true]);
    process.kill(dev!.pid!, "SIGKILL");
    await eventually(() => !isAlive(redis) && !processGroupAlive(provider), 30_000, "the provider and the registry's redis-server gone with dev");
  });

  it("says in one line when a provider that keeps its registry in memory forgot the platform's instances", async () => {
    const main = join(project, "src", "main.ts");
    const source = await readFile(main, "utf8");
    await writeFile(main, source.replace("const store = registryStore();", "const store = new MemoryStore();"));
    try {
      await startDev();
      const api = await platformApi();
      await api.ok(api.post("/services/instances", { json: { name: "forgotten", service_name: SERVICE, plan: "small", owner: "dev" } }), 201);
      await restartProvider();
      const line = await dev!.waitForLine(/^dev: the provider does not know/, SERVED_MS);
      expect(line).toBe("dev: the provider does not know the instance forgotten now (404): its registry did not outlive the restart; keep it in Redis (REGISTRY_STORE) to keep them");
      expect((await api.get("/services/instances/forgotten/status")).text).toBe('Service instance "forgotten" is not implemented for this service');
    } finally {
      await writeFile(main, source);
    }
  });
});
