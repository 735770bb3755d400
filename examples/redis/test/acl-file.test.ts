/**
 * Plan `shared` and the ACL file, with the embedded redis-server `npm start` runs. A bind or an
 * unbind answers before the ACL file has it (the registry journals it), so these tests put the
 * background save off (ACL_SAVE_INTERVAL_MS) and crash the server while the file still lacks
 * what the platform was told: once the server is back, the provider makes those changes again.
 * A server that comes back without its ACL file at all is reported down.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningProvider } from "../redis-provider.js";
import {
  appSetsKey,
  bindEnv,
  eventually,
  killServersUnder,
  pidIn,
  platform,
  startTestProvider,
  tempDir,
  testConfig,
} from "./support.js";

/**
 * Deadlines sized for a loaded machine; the waits end as soon as their condition holds. (The
 * replay after a crash once looked slow, 22 s: the test's own node-redis clients, one per app
 * per try, held the event loop it shares with the provider. `appSetsKey` is a raw connection.)
 */
const RECOVERY_MS = 60_000;

describe("plan shared and the ACL file on disk", { timeout: 3 * RECOVERY_MS }, () => {
  let dataDir: string;
  let provider: RunningProvider;
  let api: ReturnType<typeof platform>;
  const aclFile = () => join(dataDir, "embedded", "users.acl");
  const savedUsers = async () => (await readFile(aclFile(), "utf8")).split("\n").map((line) => line.split(" ")[1]);

  /** A provider whose background saves never come within a test: only its start and its stop save. */
  const start = async () => {
    provider = await startTestProvider(testConfig({ dataDir, aclSaveIntervalMs: 600_000 }));
    api = platform(provider.url);
  };
  /** Stopping saves the ACL file; the next start has it as it was. */
  const restart = async () => {
    await provider.close();
    await start();
  };

  /** kill -9 of the embedded server; resolves once the provider's supervisor has it answering again. */
  const crashServer = async (beforeRestart?: () => Promise<void>) => {
    const pid = (await pidIn(join(dataDir, "embedded")))!;
    await beforeRestart?.();
    process.kill(pid, "SIGKILL");
    await vi.waitFor(
      async () => {
        const now = await pidIn(join(dataDir, "embedded"));
        expect(now).not.toBe(pid);
        expect((await fetch(`${provider.url}/healthcheck?check=all`)).status).toBe(200);
      },
      { timeout: RECOVERY_MS, interval: 100 },
    );
  };

  beforeAll(async () => {
    dataDir = await tempDir("acl-file");
    await start();
  });

  afterAll(async () => {
    await provider?.close();
    await killServersUnder(dataDir);
  });

  it("keeps every bind it answered, binds arriving together included, when the server crashes before saving them", async () => {
    const instances = Array.from({ length: 12 }, (_, i) => `cache${i}`);
    await Promise.all(instances.map(async (instance) => expect((await api.create(instance, "shared")).status).toBe(201)));
    const binds = instances.flatMap((instance) => ["web", "worker", "cron"].map((app) => ({ instance, app })));
    const envs = await Promise.all(binds.map(async ({ instance, app }) => bindEnv(await api.bindApp(instance, app))));
    // What the platform was told is not in the ACL file yet: only the journal has it.
    const saved = await savedUsers();
    expect(envs.filter((env) => saved.includes(env.REDIS_USER))).toEqual([]);

    await crashServer();
    await eventually(async () => (await Promise.all(envs.map(appSetsKey))).every((answer) => answer === "OK"), RECOVERY_MS, "every app connects again");
    for (const instance of instances) expect((await api.status(instance)).status).toBe(204);
    // Made again and saved: the file has them now, for the next crash.
    await eventually(async () => {
      const users = await savedUsers();
      return envs.every((env) => users.includes(env.REDIS_USER));
    }, RECOVERY_MS);
  });

  it("keeps a rotation, both passwords, when the server crashes before saving it", async () => {
    expect((await api.create("rotating", "shared")).status).toBe(201);
    const env = bindEnv(await api.bindApp("rotating", "web"));
    await restart(); // the bind is in the ACL file; the rotation will not be
    const answer = await api.action("POST", "rotating", "/apps/web/rotate-password");
    expect(answer.status).toBe(200);
    const rotated = JSON.parse(answer.text) as Record<string, string>;

    await crashServer();
    await eventually(async () => (await appSetsKey(env)) === "OK" && (await appSetsKey(rotated)) === "OK", RECOVERY_MS, "both passwords work again");
  });

  it("keeps every unbind it answered, unbinds arriving together included, when the server crashes before saving them", async () => {
    const instances = Array.from({ length: 12 }, (_, i) => `short-lived${i}`);
    await Promise.all(instances.map(async (instance) => expect((await api.create(instance, "shared")).status).toBe(201)));
    const envs = await Promise.all(instances.map(async (instance) => bindEnv(await api.bindApp(instance, "web"))));
    await restart();
    expect(await savedUsers()).toEqual(expect.arrayContaining(envs.map((env) => env.REDIS_USER)));

    await Promise.all(instances.map(async (instance) => expect((await api.unbindApp(instance, "web")).status).toBe(200)));
    // The ACL file still has the users: a server restarted from it alone would let the apps back in.
    expect(await savedUsers()).toEqual(expect.arrayContaining(envs.map((env) => env.REDIS_USER)));

    await crashServer();
    await eventually(async () => (await Promise.all(envs.map(appSetsKey))).every((answer) => /WRONGPASS/.test(answer)), RECOVERY_MS, "no app connects");
    await eventually(async () => {
      const users = await savedUsers();
      return envs.every((env) => !users.includes(env.REDIS_USER));
    }, RECOVERY_MS);
  });

  it("reports an instance down when its server restarts without its ACL file, even after a new bind", async () => {
    expect((await api.create("lost", "shared")).status).toBe(201);
    expect((await api.status("lost")).status).toBe(204);
    await restart(); // saved: nothing left in the journal to make again

    // The server comes back with only its administrator: the ACL file was lost.
    await crashServer(async () => {
      const administrator = (await readFile(aclFile(), "utf8")).split("\n").filter((line) => line.startsWith("user default "));
      await writeFile(aclFile(), `${administrator.join("\n")}\n`);
    });

    const answer = await api.status("lost");
    expect(answer.status).toBe(500);
    expect(answer.text).toMatch(/does not accept this instance's connections/);
    // A bind creates the app's user, not the instance's health user: still down.
    bindEnv(await api.bindApp("lost", "web"));
    expect((await api.status("lost")).status).toBe(500);
  });

  it("answers a bind without waiting for the ACL file, and saves it in the background", async () => {
    await provider.close();
    provider = await startTestProvider(testConfig({ dataDir, aclSaveIntervalMs: 50 }));
    api = platform(provider.url);
    expect((await api.create("saved-later", "shared")).status).toBe(201);
    const env = bindEnv(await api.bindApp("saved-later", "web"));
    await eventually(async () => (await savedUsers()).includes(env.REDIS_USER), RECOVERY_MS, "the bind in the ACL file");
  });
});
