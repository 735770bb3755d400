/**
 * `provider-kit platform` as a process (usage errors, --memory, --seed), seeding idempotence on
 * a real Redis, and `run` refused beyond loopback.
 */
import { execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { applySeed, readSeed } from "../../src/platform/seed.js";
import { startRedisServer, type RedisServer } from "../../../../test/support/redis-server.js";
import { childEnv, run, startLongRunning } from "../../../../test/support/processes.js";
import { eventually } from "../../../../test/support/eventually.js";
import { ADMIN, Api, startTestPlatform, startTestProvider, type TestProvider } from "./helpers.js";
import { PASSWORD, USER } from "../../../../test/support/fake-provider.js";

const ROOT = resolve(import.meta.dirname, "../../../..");
const CLI = ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "platform"];

let dir: string;
let provider: TestProvider;
let seedFile: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "platform-cli-"));
  provider = await startTestProvider();
  seedFile = join(dir, "seed.yaml");
  await writeFile(
    seedFile,
    stringify({
      users: [{ email: "dev@example.com", password: "dev-password" }],
      teams: [{ name: "devs", users: ["dev@example.com"] }],
      // The admin is in admin and devs: the service names its owner team, as serviceCreate asks.
      services: [{ id: "kv", username: USER, password: PASSWORD, endpoint: { production: provider.running.url }, team: "devs" }],
      apps: [{ name: "demo", platform: "node", team: "devs", units: 2 }],
      instances: [{ name: "demo-kv", service: "kv", team: "devs" }],
      bindings: [{ instance: "demo-kv", app: "demo" }],
    }),
  );
});
afterAll(async () => {
  await provider.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("provider-kit platform (the command)", () => {
  it("refuses to start without the admin's email and password, saying what to set", async () => {
    const finished = await run(process.execPath, [...CLI, "--memory", "--port", "0"], { cwd: ROOT, timeoutMs: 60_000 });
    expect(finished.code).toBe(2);
    expect(finished.stderr).toMatch(/set PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD/);
  });

  it("stops, freeing its port, when the process that started it is killed without passing a signal on", async () => {
    // What npm or a shell killed outright leaves: the platform re-parented, and nobody to stop it.
    const command = [process.execPath, ...CLI, "--memory", "--port", "0"].map((word) => `'${word}'`).join(" ");
    const parent = startLongRunning("sh", ["-c", `${command} & wait`], {
      cwd: ROOT,
      env: { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password },
    });
    try {
      const url = await parent.waitForUrl(/listening on/, 60_000);
      expect((await fetch(`${url}/healthcheck`)).status).toBe(200);
      parent.signal("SIGKILL");
      await eventually(() => !parent.groupAlive(), 20_000, "the platform gone");
      await expect(fetch(`${url}/healthcheck`)).rejects.toThrow();
    } finally {
      await parent.stop();
    }
  });

  it("refuses a seed file that is not as expected, naming the place", async () => {
    const bad = join(dir, "bad.yaml");
    await writeFile(bad, "apps: [{name: x, units: many}]\n");
    const finished = await run(process.execPath, [...CLI, "--memory", "--port", "0", "--seed", bad], {
      cwd: ROOT,
      env: { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password },
      timeoutMs: 60_000,
    });
    expect(finished.code).toBe(2);
    expect(finished.stderr).toMatch(/seed file .* is not as expected at apps\.0\.units/);
  });

  it("starts in memory from a seed: the seeded user sees the app bound to the instance", async () => {
    const platform = startLongRunning(process.execPath, [...CLI, "--memory", "--port", "0", "--seed", seedFile], {
      cwd: ROOT,
      env: { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password },
    });
    try {
      const url = await platform.waitForUrl(/listening on/, 60_000);
      expect(platform.output()).toContain("state in memory");
      const dev = await new Api(url).login("dev@example.com", "dev-password");
      expect((await dev.get("/services/instances?app=demo")).json()).toEqual([{ service: "kv", instances: ["demo-kv"] }]);
      expect((await dev.get("/apps/demo")).json<{ Units: unknown[] }>().Units).toHaveLength(2);
      // The provider outlives this in-memory platform: leave it without the instance.
      await dev.ok(dev.delete("/services/instances/demo-kv/demo"));
      await dev.ok(dev.delete("/services/instances/demo-kv"));
    } finally {
      await platform.stop();
    }
  });

  it("refuses a second start on the same --data-dir, naming the holder, and leaves the first one serving", async () => {
    const dataDir = join(dir, "shared-data");
    const env = { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password };
    const first = startLongRunning(process.execPath, [...CLI, "--port", "0", "--data-dir", dataDir], { cwd: ROOT, env });
    try {
      const url = await first.waitForUrl(/listening on/, 60_000);
      const holder = Number((await readFile(join(dataDir, "provider.lock"), "utf8")).trim());
      const second = await run(process.execPath, [...CLI, "--port", "0", "--data-dir", dataDir], { cwd: ROOT, env, timeoutMs: 60_000 });
      expect(second.code).toBe(2); // a start-up error, as in every provider-kit command
      expect(second.stderr).toContain(
        `error: the platform could not start: Another platform (pid ${holder}) is using the data directory ${dataDir}. Stop it first, or set --data-dir to another folder.`,
      );
      // The first one's embedded Redis was left alone: its state still answers.
      const admin = await new Api(url).login(ADMIN.email, ADMIN.password);
      expect((await admin.get("/teams")).json()).toEqual([{ name: "admin" }]);
    } finally {
      await first.stop();
    }
  });
});

describe("provider-kit platform: pools, platforms, quota and variant from flags", () => {
  const env = { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password };

  // Four platform processes, one after another, each given a loaded machine's start-up time.
  it("refuses bad values, naming the flag", { timeout: 4 * 60_000 }, async () => {
    for (const [flag, value, why] of [
      ["--pool", "Bad Pool", /Invalid pool "Bad Pool"/],
      ["--quota", "-5", /-1 for unlimited/],
      ["--api-variant", "3", /give 1 or 2/],
      ["--platform", "Not OK", /give a platform name/],
    ] as const) {
      const finished = await run(process.execPath, [...CLI, "--memory", "--port", "0", flag, value], { cwd: ROOT, env, timeoutMs: 60_000 });
      expect(finished.code, flag).toBe(2);
      expect(finished.stderr, flag).toMatch(why);
      expect(finished.stderr, flag).toContain(flag);
    }
  });

  it("serves what the flags configure", async () => {
    const platform = startLongRunning(
      process.execPath,
      [...CLI, "--memory", "--port", "0", "--pool", "shared", "--pool", "private=admin", "--platform", "go", "--platform", "elixir", "--quota", "1", "--api-variant", "2"],
      { cwd: ROOT, env },
    );
    try {
      const api = await new Api(await platform.waitForUrl(/listening on/, 60_000)).login(ADMIN.email, ADMIN.password);
      expect((await api.get("/pools")).json()).toEqual([{ Team: "admin", Pools: ["shared", "private"] }]);
      expect((await api.get("/platforms")).json()).toEqual([{ Name: "go" }, { Name: "elixir" }]);
      await api.ok(api.post("/apps", { json: { name: "first", platform: "elixir" } }));
      expect((await api.get("/apps/first")).json()).not.toHaveProperty("Pool");
      expect((await api.get(`/quota/${ADMIN.email}`)).json()).toEqual({ items: 1, available: 0 });
      expect((await api.post("/apps", { json: { name: "second", platform: "go" } })).text).toBe("Quota exceeded");
      // A reset token goes to the terminal: there is no mail.
      await api.ok(api.post(`/users/${ADMIN.email}/password`));
      await platform.waitForLine(/password reset for admin@example\.com: POST \/users\/admin@example\.com\/password\?token=[0-9a-f]+/, 10_000);
    } finally {
      await platform.stop();
    }
  });
});

describe("seeding on a real Redis", () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(() => redis.stop());

  it("is idempotent: a second start with the same seed changes nothing and calls no provider", async () => {
    const first = await startTestPlatform("memory", { state: { kind: "redis", url: redis.url }, seedFile });
    await first.platform.close();
    const calls = provider.received.length;
    const second = await startTestPlatform("memory", { state: { kind: "redis", url: redis.url }, seedFile });
    try {
      expect(provider.received.length).toBe(calls);
      expect((await second.admin.get("/apps")).json<unknown[]>()).toHaveLength(1);
      await applySeed(second.platform.context, ADMIN.email, await readSeed(seedFile));
      expect(provider.received.length).toBe(calls);
    } finally {
      await second.platform.close();
    }
  });
});

describe("provider-kit platform: secrets kept out of ps and the start-up environment", () => {
  /** The platform started directly (its pid is node's), with `stdin` written to it when given. */
  async function startCli(args: string[], env: Record<string, string>, stdin?: string) {
    const child = spawn(process.execPath, [...CLI, "--port", "0", ...args], { cwd: ROOT, env: childEnv(env), stdio: ["pipe", "pipe", "pipe"] });
    child.stdin.end(stdin);
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const exited = once(child, "exit");
    const url = await eventually(() => /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1] ?? (child.exitCode !== null && Promise.reject(new Error(output))), 60_000, "the platform listening");
    return {
      url,
      /** What any local user reads of the process (`ps`): its command line. */
      commandLine: () => readFile(`/proc/${child.pid}/cmdline`, "utf8"),
      /** What this OS user's other processes (run's commands) read: its start-up environment. */
      startEnvironment: () => readFile(`/proc/${child.pid}/environ`, "utf8"),
      stop: async () => {
        child.kill("SIGTERM");
        await exited;
      },
    };
  }

  it("takes the Redis URL from PLATFORM_REDIS_URL or a file, and the admin's password from a file or standard input", async () => {
    const redis = await startRedisServer();
    const redisPassword = "redis-secret-not-in-ps";
    await promisify(execFile)("redis-cli", ["-p", String(redis.port), "CONFIG", "SET", "requirepass", redisPassword]);
    const redisUrl = `redis://:${redisPassword}@127.0.0.1:${redis.port}`;
    const [urlFile, passwordFile] = [join(dir, "redis-url"), join(dir, "admin-password")];
    await writeFile(urlFile, `${redisUrl}\n`, { mode: 0o600 });
    await writeFile(passwordFile, "admin-password-from-file\n", { mode: 0o600 });
    try {
      for (const [args, email, env, stdin, password] of [
        [["--admin-password-file", passwordFile], "one@example.com", { PLATFORM_REDIS_URL: redisUrl }, undefined, "admin-password-from-file"],
        [["--redis-url-file", urlFile, "--admin-password-file", "-"], "two@example.com", {}, "admin-password-on-stdin\n", "admin-password-on-stdin"],
      ] as const) {
        const platform = await startCli([...args], { ...env, PLATFORM_ADMIN_EMAIL: email }, stdin);
        try {
          expect(await platform.commandLine()).not.toContain(redisPassword);
          expect(await platform.commandLine()).not.toContain(password);
          expect(await platform.startEnvironment()).not.toContain(password);
          // The admin logs in with that password, and the state is in that Redis.
          const admin = await new Api(platform.url).login(email, password);
          await admin.ok(admin.post("/teams", { json: { name: `team-${args.length}` } }));
        } finally {
          await platform.stop();
        }
      }
      const { stdout } = await promisify(execFile)("redis-cli", ["-p", String(redis.port), "--no-auth-warning", "-a", redisPassword, "--scan"]);
      expect(stdout).toContain("provider-kit-platform:teams"); // the state went to that Redis
    } finally {
      await redis.stop();
    }
  }, 120_000); // two platform starts on a loaded runner

  it("refuses two sources for one secret, naming them", async () => {
    const env = { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password, PLATFORM_REDIS_URL: "redis://127.0.0.1:9" };
    const both = await run(process.execPath, [...CLI, "--port", "0", "--redis-url", "redis://127.0.0.1:9"], { cwd: ROOT, env, timeoutMs: 60_000 });
    expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("--redis-url and PLATFORM_REDIS_URL all give the Redis URL: give one.")]);
    const passwords = await run(process.execPath, [...CLI, "--memory", "--port", "0", "--admin-password-file", "-"], { cwd: ROOT, env: { PLATFORM_ADMIN_EMAIL: ADMIN.email, PLATFORM_ADMIN_PASSWORD: ADMIN.password }, timeoutMs: 60_000 });
    expect([passwords.code, passwords.stderr]).toEqual([2, expect.stringContaining("PLATFORM_ADMIN_PASSWORD and --admin-password-file both give the admin's password: give one.")]);
  });
});

