import { readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { answersPing, withConnection } from "../../src/redis/connection.js";
import {
  ensureRedisServer,
  freePort,
  removeRedisServer,
  RedisServerNotFoundError,
  runningPid,
  stopRedisServer,
  type RedisServerSpec,
} from "../../src/redis/server.js";
import { isAlive, killServersUnder, REDIS_SERVER, tempDir } from "../../examples/redis/test/support.js";

describe("redis-server process manager", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => killServersUnder(dir)));
  });

  async function spec(overrides: Partial<RedisServerSpec> = {}): Promise<RedisServerSpec> {
    const root = await tempDir("process");
    dirs.push(root);
    return { dir: join(root, "embedded"), port: await freePort(), password: "admin-pw", detached: true, binary: REDIS_SERVER, ...overrides };
  }

  it("starts a server that answers only with its password, with the plan's memory limit", async () => {
    const server = await spec({ maxmemory: "64mb" });
    await ensureRedisServer(server);
    const address = { host: "127.0.0.1", port: server.port };
    expect(await answersPing({ ...address, password: "admin-pw" })).toBe(true);
    expect(await answersPing({ ...address, password: "wrong" })).toBe(false);
    const maxmemory = await withConnection({ ...address, password: "admin-pw" }, (client) => client.configGet("maxmemory"));
    expect(maxmemory.maxmemory).toBe(String(64 * 1024 * 1024));
    // No password in clear on disk: the ACL file holds a hash.
    expect(await readFile(join(server.dir, "users.acl"), "utf8")).not.toContain("admin-pw");
  });

  it("adopts a running server instead of starting a second one", async () => {
    const server = await spec();
    await ensureRedisServer(server);
    const pid = await runningPid(server.dir);
    await ensureRedisServer(server);
    expect(await runningPid(server.dir)).toBe(pid);
  });

  it("starts a stopped server again with its data", async () => {
    const server = await spec();
    const address = { host: "127.0.0.1", port: server.port, password: "admin-pw" };
    await ensureRedisServer(server);
    await withConnection(address, (client) => client.set("kept", "yes"));
    await stopRedisServer(server.dir);
    expect(await answersPing(address)).toBe(false);
    await ensureRedisServer(server);
    expect(await withConnection(address, (client) => client.get("kept"))).toBe("yes");
  });

  it("removes the process and its directory", async () => {
    const server = await spec();
    await ensureRedisServer(server);
    const pid = (await runningPid(server.dir))!;
    await removeRedisServer(server.dir);
    expect(isAlive(pid)).toBe(false);
    await expect(stat(server.dir)).rejects.toThrow(/ENOENT/);
  });

  it("says how to install redis-server when it is missing", async () => {
    const server = await spec({ binary: "/nonexistent/redis-server" });
    const start = ensureRedisServer(server);
    await expect(start).rejects.toBeInstanceOf(RedisServerNotFoundError);
    await expect(start).rejects.toThrow(/apt-get install redis-server.*brew install redis/);
  });

  it("reports the server's own words when it cannot start", async () => {
    const server = await spec({ maxmemory: "lots" });
    await expect(ensureRedisServer(server)).rejects.toThrow(/exited before answering.*maxmemory/i);
  });
});
