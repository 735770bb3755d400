/**
 * The doc walks: the README's quick start, the Redis example's README and the local platform's
 * tour, run as a newcomer runs them. Each command is the page's own text in a real bash (ports
 * and folders put in place of the page's), servers are real processes, and what the page says
 * the commands answer is checked.
 */
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { appClient } from "../../support/redis-example.js";
import { killServersUnder } from "../../support/data-dirs.js";
import { freePort } from "@provider-kit/platform/redis-server";
import { eventually } from "../../support/eventually.js";
import { startRedisServer, type RedisServer } from "../../support/redis-server.js";
import type { LongRunning } from "../../support/processes.js";
import { ROOT } from "../markdown-files.js";
import { DocWalk, Terminal } from "./doc-walk.js";
import { PLATFORM_TOUR, README_PLATFORM, REDIS_EXAMPLE, type Walk } from "./walks.js";

const START_MS = 60_000;
/** The settings that put a provider on a free loopback port and its data in `dataDir`. */
const providerSettings = (dataDir: string) => ({ PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir });
const portOf = (url: string) => new URL(url).port;

/** A walk with its terminal, and what it started, stopped at the end. */
function useWalk<W extends Walk>(declaration: W) {
  const state = { walk: undefined as unknown as DocWalk<W>, started: [] as LongRunning[], dataDirs: [] as string[] };
  let terminal: Terminal;
  beforeAll(async () => {
    terminal = await Terminal.open();
    state.walk = new DocWalk(declaration, terminal);
  });
  afterAll(async () => {
    await Promise.all(state.started.map((process) => process.stop()));
    await Promise.all(state.dataDirs.map((dir) => killServersUnder(dir)));
    await terminal?.close();
  });
  return {
    get walk() {
      return state.walk;
    },
    async dataDir(name: string) {
      const dir = await mkdtemp(path.join(tmpdir(), `doc-walk-${name}-`));
      state.dataDirs.push(dir);
      return dir;
    },
    /** Starts the command in its own bash, as `&` does: stopped at the end, not waited for. */
    launch(name: keyof W["commands"] & string, env: Record<string, string>): LongRunning {
      const process = state.walk.start(name, env);
      state.started.push(process);
      return process;
    },
    /** Starts the command in its own bash and resolves with it once a line matches `ready`. */
    async start(name: keyof W["commands"] & string, env: Record<string, string>, ready: RegExp) {
      const process = this.launch(name, env);
      return { process, url: await process.waitForUrl(ready, START_MS) };
    },
    /** Every command of the walk ran. */
    expectAllRan() {
      expect([...state.walk.ran].sort()).toEqual(Object.keys(declaration.commands).sort());
    },
  };
}

describe("README's quick start, then the Redis example's README", () => {
  const doc = useWalk(REDIS_EXAMPLE);
  let provider: LongRunning;

  it("npm start: the example listens, with embedded redis-servers", async () => {
    const started = await doc.start("start", providerSettings(await doc.dataDir("example")), /Redis provider listening/);
    provider = started.process;
    doc.walk.replace("localhost:8080", `localhost:${portOf(started.url)}`);
  });

  it("the quick start's curl lines: plans, a shared instance, an app bound with REDIS_URL", async () => {
    const plans = await doc.walk.run("plans");
    expect(plans.statuses).toEqual([200]);
    expect((JSON.parse(plans.stdout) as { name: string }[]).map((plan) => plan.name)).toEqual(["shared", "dedicated"]);
    expect((await doc.walk.run("create")).statuses).toEqual([201]);
    const bind = await doc.walk.run("bind");
    expect(bind.statuses).toEqual([201]);
    expect(JSON.parse(bind.stdout)).toMatchObject({ REDIS_URL: expect.stringMatching(/^redis:\/\/demo\.app\.myapp:/), REDIS_KEY_PREFIX: "demo:" });
  });

  it("the conformance kit passes against it", async () => {
    const check = await doc.walk.run("check");
    expect(check.code, check.stdout + check.stderr).toBe(0);
  }, 120_000);

  it("the whole flow with curl: create 201, status 204, bind-app 201 with the env shown, info", async () => {
    expect((await doc.walk.run("setUp")).code).toBe(0);
    expect((await doc.walk.run("flowPlans")).statuses).toEqual([200]);
    expect((await doc.walk.run("flowCreate")).statuses).toEqual([201]);
    expect((await doc.walk.run("flowStatus")).stdout).toBe("204\n");
    const bind = await doc.walk.run("flowBind");
    expect(bind.statuses).toEqual([201]);
    const env = JSON.parse(bind.stdout) as Record<string, string>;
    expect(Object.keys(env)).toEqual(["REDIS_HOST", "REDIS_PORT", "REDIS_USER", "REDIS_PASSWORD", "REDIS_URL", "REDIS_KEY_PREFIX"]);
    expect(env).toMatchObject({ REDIS_HOST: "127.0.0.1", REDIS_USER: "cache.app.myapp", REDIS_KEY_PREFIX: "cache:" });
    const info = await doc.walk.run("flowInfo");
    expect(JSON.parse(info.stdout)).toContainEqual({ label: "Plan", value: "shared" });
  });

  it("the actions: rotate 200 and 404, retire 200, memory, flush, 401 without credentials, 404 for an unknown instance", async () => {
    const rotate = await doc.walk.run("rotate");
    expect(rotate.statuses).toEqual([200]);
    const env = JSON.parse(rotate.stdout) as Record<string, string>;
    expect(env).toMatchObject({ REDIS_HOST: "127.0.0.1", REDIS_USER: "cache.app.myapp" });
    const unbound = await doc.walk.run("rotateUnbound");
    expect(unbound.statuses).toEqual([404]);
    expect(unbound.stdout).toBe(doc.walk.shown("rotateUnbound").join("\n"));
    const retire = await doc.walk.run("retire");
    expect([retire.statuses, retire.stdout]).toEqual([[200], doc.walk.shown("retire").join("\n")]);

    // The page's figures count one key the app wrote: the app writes it, with its new password.
    const app = await appClient(env);
    await app.set("cache:greeting", "hello");
    app.destroy();
    const memory = await doc.walk.run("memory");
    expect(memory.statuses).toEqual([200]);
    expect(JSON.parse(memory.stdout)).toEqual({ plan: "shared", keys: 1, complete: true, usedBytes: expect.any(Number) });
    const flush = await doc.walk.run("flush");
    expect(JSON.parse(flush.stdout)).toEqual({ removedKeys: 1 });
    expect((await doc.walk.run("memoryWithoutAuth")).statuses).toEqual([401]);
    const unknown = await doc.walk.run("memoryOfUnknown");
    expect(unknown.statuses).toEqual([404]);
    expect(unknown.stdout).toBe('Instance "nope" not found.');
  });

  it("unbind 200, destroy 200; a dedicated instance answers 202, then 204 once its redis-server answers", async () => {
    expect((await doc.walk.run("flowUnbind")).statuses).toEqual([200]);
    expect((await doc.walk.run("flowDestroy")).statuses).toEqual([200]);
    expect((await doc.walk.run("dedicatedCreate")).statuses).toEqual([201]);
    const first = await doc.walk.run("dedicatedStatus");
    expect(["202\n", "204\n"]).toContain(first.stdout);
    await eventually(async () => (await doc.walk.run("dedicatedStatus")).stdout === "204\n", 30_000, "the dedicated instance up");
    await provider.stop();
  });

  describe("the compiled example, its registry on a Redis of its own", () => {
    let registry: RedisServer;
    beforeAll(async () => {
      registry = await startRedisServer();
      // The page's URL has the password pw: the server asks for it from now on.
      const admin = await createClient({ url: registry.url }).connect();
      await admin.configSet("requirepass", "pw");
      admin.destroy();
    });
    afterAll(async () => registry?.stop());

    it("starts from dist/ and keeps its records on REGISTRY_REDIS_URL's server", async () => {
      doc.walk.replace("registry:6379", `127.0.0.1:${registry.port}`);
      const { url } = await doc.start("compiled", providerSettings(await doc.dataDir("compiled")), /Redis provider listening/);
      const authorization = `Basic ${Buffer.from("redis:s3cret").toString("base64")}`;
      const created = await fetch(`${url}/resources`, { method: "POST", headers: { authorization }, body: new URLSearchParams({ name: "kept", plan: "shared", team: "t" }) });
      expect(created.status).toBe(201);
      const client = await createClient({ url: `redis://:pw@127.0.0.1:${registry.port}` }).connect();
      try {
        expect(await client.keys("_provider-kit:*")).not.toEqual([]);
      } finally {
        client.destroy();
      }
      doc.expectAllRan();
    });
  });
});

/** The seed the pages use, with this run's provider in place of the page's (port 42080 unless PROVIDER_PORT says otherwise). */
async function seedFor(providerUrl: string, dir: string): Promise<string> {
  const seed = await readFile(path.join(ROOT, "examples/redis/platform-seed.yaml"), "utf8");
  const pagesProvider = "http://127.0.0.1:${PROVIDER_PORT:-42080}";
  expect(seed).toContain(pagesProvider);
  const file = path.join(dir, "platform-seed.yaml");
  await writeFile(file, seed.replace(pagesProvider, providerUrl));
  return file;
}

describe("README's platform section", () => {
  const doc = useWalk(README_PLATFORM);

  it("the example in the background, the wait for it, then the platform seeded with it: the seed's calls made, then listening", async () => {
    // The page's lines one after another, as pasted: the wait line alone holds the platform back.
    const port = String(await freePort());
    doc.walk.replace("42080", port);
    doc.launch("provider", { ...providerSettings(await doc.dataDir("example")), PORT: port });
    expect((await doc.walk.run("wait")).code).toBe(0);
    const dir = await doc.dataDir("platform");
    doc.walk.replace("examples/redis/platform-seed.yaml", await seedFor(`http://127.0.0.1:${port}`, dir));
    doc.walk.replace("--port 42000", `--port 0 --data-dir ${path.join(dir, "state")}`);
    const platform = await doc.start("platform", {}, /listening on http:/);
    const output = platform.process.output();
    expect(output).toMatch(/provider redis: POST \/resources -> 201/);
    expect(output).toMatch(/provider redis: POST \/resources\/cache\/bind-app -> 201/);
    expect(output.match(/provider redis: POST \/resources\/cache\/bind -> 201/g)).toHaveLength(2);
    const login = await fetch(`${platform.url}/users/me@example.com/tokens`, { method: "POST", body: JSON.stringify({ password: "admin-s3cret" }), headers: { "content-type": "application/json" } });
    expect(login.status).toBe(200);
    doc.expectAllRan();
  });
});

describe("docs/tools/platform.md's tour", () => {
  const doc = useWalk(PLATFORM_TOUR);
  let provider: LongRunning;
  let platform: LongRunning;
  let platformUrl: string;
  let stateDir: string;

  it("starts the example and the seeded platform, printing what the page shows", async () => {
    doc.walk.replace("PORT=42080", "PORT=0");
    const started = await doc.start("provider", providerSettings(await doc.dataDir("example")), /Redis provider listening/);
    provider = started.process;
    expect(JSON.parse(provider.output().split("\n").find((line) => line.includes("Redis provider listening"))!)).toMatchObject({
      level: 30,
      url: started.url,
      msg: "Redis provider listening",
    });
    doc.walk.replace("127.0.0.1:42080", `127.0.0.1:${portOf(started.url)}`);

    const dir = await doc.dataDir("platform");
    stateDir = path.join(dir, "state");
    doc.walk.replace("examples/redis/platform-seed.yaml", await seedFor(started.url, dir));
    doc.walk.replace("--port 42000", `--port 0 --data-dir ${stateDir}`);
    const running = await doc.start("platform", {}, /listening on http:/);
    platform = running.process;
    platformUrl = running.url;
    doc.walk.replace("localhost:42000", `localhost:${portOf(running.url)}`);
    doc.walk.replace("127.0.0.1:42000", `127.0.0.1:${portOf(running.url)}`);
    doc.walk.replace(".provider-kit-platform", stateDir);

    // The page's output, times and durations aside, in its order.
    const shown = doc.walk.shown("platform").filter((line) => /^\d\d:\d\d:\d\d |^provider-kit platform|^Log in:/.test(line));
    const printed = doc.walk.asShown(platform.output()).split("\n");
    const pattern = (line: string) =>
      new RegExp(
        line
          .replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
          .replace(/^\d\d:\d\d:\d\d/, "\\d\\d:\\d\\d:\\d\\d")
          .replace(/\\\(\d+ ms\\\)/, "\\(\\d+ ms\\)")
          .replace(/\\\.\\\.\\\.$/, ".*"),
      );
    let at = 0;
    for (const line of shown) {
      const found = printed.findIndex((candidate, index) => index >= at && pattern(line).test(candidate));
      expect(found, `the platform's output should show, in order: ${line}\n${printed.join("\n")}`).toBeGreaterThanOrEqual(at);
      at = found + 1;
    }
  });

  it("logs in, and the app's env has the binding's variables, masked", async () => {
    expect((await doc.walk.run("login")).code).toBe(0);
    const env = JSON.parse((await doc.walk.run("env")).stdout) as { name: string; value: string; public: boolean }[];
    for (const name of ["REDIS_HOST", "REDIS_URL", "TSURU_SERVICES"]) {
      expect(env).toContainEqual({ name, value: "*** (private variable)", public: false });
    }
    expect(env).toContainEqual({ name: "TSURU_APPNAME", value: "myapp", public: true });
  });

  it("runs redis-cli on each unit with the app's env: PONG", async () => {
    expect((await doc.walk.run("run")).stdout.trim()).toBe(doc.walk.shown("run").join("\n"));
  });

  it("shows the instance with the provider's own info", async () => {
    const instance = JSON.parse((await doc.walk.run("instance")).stdout) as Record<string, unknown>;
    expect(instance).toMatchObject({ name: "cache", servicename: "redis", teams: ["admin"], apps: ["myapp"], planname: "shared", teamowner: "admin" });
    expect(instance.info).toEqual({ Plan: "shared", Address: expect.stringMatching(/^127\.0\.0\.1:\d+$/), "Key prefix": "cache:", Keys: "0", "Memory used": "0 B" });
  });

  it("registers the example's manifest of actions, as its README shows", async () => {
    doc.walk.replace("service-actions.json", path.join(stateDir, "..", "service-actions.json"));
    const manifest = await doc.walk.run("actionsManifest");
    expect(manifest.code, manifest.stderr).toBe(0);
    const written = JSON.parse(await readFile(path.join(stateDir, "..", "service-actions.json"), "utf8")) as unknown;
    expect(written).toEqual(JSON.parse(doc.walk.shown("actionsManifest").join("")));
    // The reader's settings for a platform: where it is and their token.
    expect((await doc.walk.runOwn(`TSURU_TARGET=${platformUrl} TSURU_TOKEN=$TOKEN`)).code).toBe(0);
    expect((await doc.walk.run("putManifest")).statuses).toEqual([200]);
  });

  it("with the provider gone, an unbind fails naming the way out, and the forced one passes over", async () => {
    await provider.stop();
    expect(doc.walk.asShown((await doc.walk.run("unbind")).stdout)).toBe(doc.walk.shown("unbind").join("\n"));
    expect(doc.walk.asShown((await doc.walk.run("forcedUnbind")).stdout).trim()).toBe(doc.walk.shown("forcedUnbind").join("\n"));
  });

  it("so does removing the instance, with ?ignoreerrors=true", async () => {
    expect(doc.walk.asShown((await doc.walk.run("remove")).stdout)).toBe(doc.walk.shown("remove").join("\n"));
    expect((await doc.walk.run("removeIgnoringErrors")).stdout).toBe("");
    expect((await doc.walk.run("instances")).stdout).toBe(doc.walk.shown("instances").join("\n"));
    const terminal = doc.walk.asShown(platform.output());
    expect(terminal).toMatch(/provider redis: DELETE \/resources\/cache\/bind-app -> failed: connect ECONNREFUSED 127\.0\.0\.1:42080 \(\d+ ms\)/);
    expect(terminal).toContain(
      "could not delete the service instance on service api: Failed to destroy the instance cache: the provider did not answer (connect ECONNREFUSED 127.0.0.1:42080). ignoring this error due to force removal...",
    );
    doc.expectAllRan();
  });
});
