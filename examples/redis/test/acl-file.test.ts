/**
 * Plan `shared` and the ACL file, with the embedded redis-server `npm start` runs: a bind or an
 * unbind the platform was told succeeded is on disk, however many arrive together, and survives
 * the server's restart; a server that comes back without its users is reported down.
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RunningProvider } from "../redis-provider.js";
import {
  appClient,
  bindEnv,
  failure,
  killServersUnder,
  pidIn,
  platform,
  startTestProvider,
  tempDir,
  testConfig,
} from "./support.js";

describe("plan shared and the ACL file on disk", () => {
  let dataDir: string;
  let provider: RunningProvider;
  let api: ReturnType<typeof platform>;
  const aclFile = () => join(dataDir, "embedded", "users.acl");
  const savedUsers = async () => (await readFile(aclFile(), "utf8")).split("\n").map((line) => line.split(" ")[1]);

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
      { timeout: 20_000, interval: 100 },
    );
  };

  beforeAll(async () => {
    dataDir = await tempDir("acl-file");
    provider = await startTestProvider(testConfig({ dataDir }));
    api = platform(provider.url);
  });

  afterAll(async () => {
    await provider?.close();
    await killServersUnder(dataDir);
  });

  it("has each bind in the ACL file when it answers, binds arriving together included, and they survive a crash", async () => {
    const instances = Array.from({ length: 12 }, (_, i) => `cache${i}`);
    await Promise.all(instances.map(async (instance) => expect((await api.create(instance, "shared")).status).toBe(201)));
    const binds = instances.flatMap((instance) => ["web", "worker", "cron"].map((app) => ({ instance, app })));

    const envs = await Promise.all(
      binds.map(async ({ instance, app }) => {
        const env = bindEnv(await api.bindApp(instance, app));
        // Read as soon as this answer is in: a save still to come would be too late for a crash now.
        expect(await savedUsers()).toContain(env.REDIS_USER);
        return env;
      }),
    );

    await crashServer();
    for (const env of envs) {
      const app = await appClient(env);
      expect(await app.set(`${env.REDIS_KEY_PREFIX}k`, "v")).toBe("OK");
      app.destroy();
    }
    for (const instance of instances) expect((await api.status(instance)).status).toBe(204);
  });

  it("has no unbound user left in the ACL file when an unbind answers, unbinds arriving together included", async () => {
    const instances = Array.from({ length: 12 }, (_, i) => `short-lived${i}`);
    await Promise.all(instances.map(async (instance) => expect((await api.create(instance, "shared")).status).toBe(201)));
    const envs = await Promise.all(instances.map(async (instance) => bindEnv(await api.bindApp(instance, "web"))));

    await Promise.all(
      envs.map(async (env, i) => {
        expect((await api.unbindApp(instances[i]!, "web")).status).toBe(200);
        expect(await savedUsers()).not.toContain(env.REDIS_USER);
      }),
    );

    await crashServer();
    for (const env of envs) expect(await failure(appClient(env))).toMatch(/WRONGPASS/);
  });

  it("reports an instance down when its server restarts without its ACL file, even after a new bind", async () => {
    expect((await api.create("lost", "shared")).status).toBe(201);
    expect((await api.status("lost")).status).toBe(204);

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
});
