import { readFile, stat } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it, vi } from "vitest";
import { answersPing, withConnection } from "@provider-kit/redis-store/connection";
import {
  ensureRedisServer,
  freePort,
  removeRedisServer,
  RedisServerNotFoundError,
  runningPid,
  startOnFreePort,
  stopRedisServer,
  superviseRedisServer,
  type RedisServerSpec,
} from "../../src/redis/server.js";
import { isAlive, REDIS_SERVER } from "../../../../test/support/redis-server.js";
import { killServersUnder, tempDir } from "../../../../test/support/data-dirs.js";

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

  it("moves to another free port when a process took the one picked before the server bound it", async () => {
    const server = await spec();
    const tried: number[] = [];
    const squatter = createServer();
    try {
      const port = await startOnFreePort(async (port) => {
        tried.push(port);
        // The race, made certain: the first port picked is taken before redis-server starts.
        if (tried.length === 1) await new Promise<void>((listening) => squatter.listen(port, "127.0.0.1", listening));
        await ensureRedisServer({ ...server, port });
        return port;
      });
      expect(tried).toHaveLength(2);
      expect(port).toBe(tried[1]);
      expect(await answersPing({ host: "127.0.0.1", port, password: "admin-pw" })).toBe(true);
    } finally {
      squatter.close();
    }
  });

  it("reports the server's own words when it cannot start", async () => {
    const server = await spec({ maxmemory: "lots" });
    await expect(ensureRedisServer(server)).rejects.toThrow(/exited before answering.*maxmemory/i);
  });
});

describe("a supervised redis-server", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => killServersUnder(dir)));
  });

  it("is restarted each time it dies, waiting longer after each quick death, and stays stopped after stop()", async () => {
    const root = await tempDir("supervised");
    dirs.push(root);
    const dir = join(root, "embedded");
    const logged: Array<Record<string, unknown>> = [];
    const log = pino({ level: "info" }, { write: (line: string) => void logged.push(JSON.parse(line) as Record<string, unknown>) });
    const server = await superviseRedisServer(
      { dir, port: await freePort(), password: "admin-pw", binary: REDIS_SERVER },
      { log, firstBackoffMs: 50, maxBackoffMs: 150 },
    );
    const pids = [(await runningPid(dir))!];
    for (let death = 0; death < 3; death++) {
      process.kill(pids.at(-1)!, "SIGKILL");
      await vi.waitFor(async () => {
        const pid = await runningPid(dir);
        expect(pid !== undefined && !pids.includes(pid) && (await answersPing(server.address))).toBe(true);
        pids.push(pid!);
      }, { timeout: 30_000, interval: 20 }); // a restart on a loaded machine
    }
    const waits = logged.filter((line) => line.msg === "redis-server exited; restarting it").map((line) => line.restartInMs);
    expect(waits).toEqual([50, 100, 150]);

    await server.stop();
    expect(isAlive(pids.at(-1)!)).toBe(false);
    expect(await runningPid(dir)).toBeUndefined();
  });
});
