/**
 * Plan `dedicated` across a `kill -9` of the provider, as a process, at each point of a
 * provisioning and of a removal: the next run finishes the work, and once the instance is
 * destroyed no process of it is left, found by its working directory (the instance's folder,
 * deleted or not) rather than by the pid file the provider keeps. The kill points are reached
 * by gates (a wrapper around redis-server, a stopped server) and events, never by timing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdir, readFile, readlink, realpath, stat, writeFile, chmod } from "node:fs/promises";
import { connect } from "node:net";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { runningPid } from "@provider-kit/platform/redis-server";
import { eventually, instanceDir, isAlive, killServersUnder, PASSWORD, platform, REDIS_SERVER, tempDir, undeletableEntry } from "./support.js";

const PROVIDER = ["--conditions=source", "--import", "tsx", "examples/redis/test/fixtures/provider.ts"];

interface Program {
  child: ChildProcess;
  output(): string;
  exit: Promise<unknown>;
}

/** Pids of the processes whose working directory is `dir` or under it, the directory deleted or not (Linux: /proc). */
async function processesUnder(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cwd = (await readlink(`/proc/${entry}/cwd`).catch(() => "")).replace(/ \(deleted\)$/, "");
    if (cwd === dir || cwd.startsWith(`${dir}/`)) pids.push(Number(entry));
  }
  return pids;
}

/** Whether a process has `SIGTERM` waiting to be delivered (it is stopped, say). */
async function termPending(pid: number): Promise<boolean> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  const SIGTERM_BIT = 1n << 14n;
  return [...status.matchAll(/^(?:ShdPnd|SigPnd):\s*([0-9a-f]+)$/gm)].some(([, mask]) => (BigInt(`0x${mask}`) & SIGTERM_BIT) !== 0n);
}

/** Whether something accepts connections and answers RESP on the port (a server that listens, before any login). */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("error", () => resolve(false));
    socket.once("data", () => {
      socket.destroy();
      resolve(true);
    });
    socket.write("PING\r\n");
  });
}

describe.skipIf(process.platform !== "linux")("dedicated instances across a kill -9 of the provider", { timeout: 180_000 }, () => {
  let redis: RedisServer;
  const programs: Program[] = [];
  const dataDirs: string[] = [];

  beforeAll(async () => {
    redis = await startRedisServer(); // the registry and the shared plan: they outlive the provider's kills
  });
  afterEach(async () => {
    for (const program of programs.splice(0)) {
      if (program.child.exitCode === null && program.child.signalCode === null) program.child.kill("SIGKILL");
      await program.exit;
    }
    for (const dataDir of dataDirs.splice(0)) {
      for (const pid of await processesUnder(dataDir)) process.kill(pid, "SIGKILL"); // a failed test leaves none behind
      await killServersUnder(dataDir);
    }
  });
  afterAll(async () => {
    await redis?.stop();
  });

  /**
   * A data directory and the provider's environment. `wrapper`: shell lines run before an
   * instance's redis-server starts (in its folder), the gate of a kill point; embedded servers
   * start as usual.
   */
  async function setup(name: string, wrapper = "") {
    const dataDir = await realpath(await tempDir(`crash-${name}`));
    dataDirs.push(dataDir);
    const server = join(dataDir, "redis-server");
    await writeFile(server, `#!/bin/sh\ncase "$(pwd -P)" in\n  */instances/*)\n${wrapper}\n  ;;\nesac\nexec ${REDIS_SERVER} "$@"\n`);
    await chmod(server, 0o755);
    const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_FORMAT: "json", PROVIDER_PASSWORD: PASSWORD, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, REDIS_URL: redis.url, REDIS_SERVER: server };
    const dir = instanceDir(dataDir, name);

    /** Starts the provider; resolves with the platform's calls once it listens. */
    const start = async () => {
      const child = spawn(process.execPath, PROVIDER, { env, stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
      const program: Program = { child, output: () => output, exit: once(child, "exit") };
      programs.push(program);
      const url = () => /"url":"(http:[^"]+)".*"msg":"Redis provider listening"/.exec(output)?.[1];
      await eventually(() => url() !== undefined || child.exitCode !== null, 60_000);
      if (url() === undefined) throw new Error(`the provider did not start:\n${output}`);
      return { program, api: platform(url()!) };
    };
    const kill = async (program: Program) => {
      program.child.kill("SIGKILL");
      await program.exit;
    };
    /** After the restart: ready, served by exactly one process, the one its folder records. */
    const readyOnce = async (api: ReturnType<typeof platform>) => {
      await eventually(async () => (await api.status(name)).status === 204, 60_000);
      expect(await processesUnder(dir)).toEqual([await runningPid(dir)]);
    };
    /** Destroyed: no process of the instance runs, and its folder is gone. */
    const gone = async () => {
      await eventually(async () => (await processesUnder(dir)).length === 0, 15_000).catch(() => {});
      expect(await processesUnder(dir)).toEqual([]);
      await expect(stat(dir)).rejects.toThrow(/ENOENT/);
    };
    return { dataDir, dir, start, kill, readyOnce, gone };
  }

  it("finishes a provisioning killed right after create answered, then removes it all", async () => {
    const { start, kill, readyOnce, gone } = await setup("early");
    const first = await start();
    expect((await first.api.create("early", "dedicated")).status).toBe(201);
    await kill(first.program);

    const second = await start();
    await readyOnce(second.api);
    expect((await second.api.destroy("early")).status).toBe(200);
    await gone();
  });

  it("adopts the server spawned by a provider killed before it could record the server's pid", async () => {
    // The first start of the instance's server kills the provider (its parent), waits for it to
    // be gone, and removes any pid the provider wrote: as if it died between spawn and record.
    const gate = `    if mkdir ../../killed-once 2>/dev/null; then
      parent=$PPID
      kill -9 "$parent"
      while [ -e "/proc/$parent" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$parent/status"; do :; done
      rm -f redis.pid
    fi`;
    const { start, readyOnce, gone } = await setup("unrecorded", gate);
    const first = await start();
    expect((await first.api.create("unrecorded", "dedicated")).status).toBe(201);
    await first.program.exit; // killed by the gate

    const second = await start();
    await readyOnce(second.api);
    expect((await second.api.destroy("unrecorded")).status).toBe(200);
    await gone();
  });

  it("adopts the server of a provider killed while that server was starting", async () => {
    const { dataDir, dir, start, kill, readyOnce, gone } = await setup("starting", `    while [ ! -e ../../go ]; do sleep 0.05; done`);
    const first = await start();
    expect((await first.api.create("starting", "dedicated")).status).toBe(201);
    await eventually(async () => (await processesUnder(dir)).length === 1); // spawned, held at the gate
    await kill(first.program);

    const second = await start();
    await writeFile(join(dataDir, "go"), "");
    await readyOnce(second.api);
    expect((await second.api.destroy("starting")).status).toBe(200);
    await gone();
  });

  it("adopts the server of a provider killed once that server answered", async () => {
    const { dir, start, kill, readyOnce, gone } = await setup("answering");
    const first = await start();
    expect((await first.api.create("answering", "dedicated")).status).toBe(201);
    const port = async () => Number(/^port (\d+)$/m.exec(await readFile(join(dir, "redis.conf"), "utf8").catch(() => ""))?.[1]);
    await eventually(async () => (await port()) > 0 && (await answers(await port())));
    await kill(first.program);

    const second = await start();
    await readyOnce(second.api);
    expect((await second.api.destroy("answering")).status).toBe(200);
    await gone();
  });

  it("removes it all when the provider is killed while it stops the server, and the platform retries the destroy", async () => {
    const { dir, start, kill, readyOnce, gone } = await setup("stopping");
    const first = await start();
    expect((await first.api.create("stopping", "dedicated")).status).toBe(201);
    await readyOnce(first.api);
    const pid = (await runningPid(dir))!;
    process.kill(pid, "SIGSTOP"); // so the provider's SIGTERM waits, and the provider with it
    try {
      const destroy = first.api.destroy("stopping").catch(() => undefined); // never answered
      await eventually(() => termPending(pid), 60_000); // the provider answers the destroy on a loaded machine
      await kill(first.program);
      await destroy;
    } finally {
      // The server now takes the SIGTERM and stops (unless a failure above came after it was gone).
      if (isAlive(pid)) process.kill(pid, "SIGCONT");
    }

    const second = await start();
    await eventually(async () => (await second.api.destroy("stopping")).status === 200, 60_000);
    await gone();
  });

  it("removes it all when the provider is killed after stopping the server, before its folder was gone", async (context) => {
    const { dir, start, kill, readyOnce, gone } = await setup("unremoved");
    const first = await start();
    expect((await first.api.create("unremoved", "dedicated")).status).toBe(201);
    await readyOnce(first.api);
    const undo = await undeletableEntry(dir);
    if (undo === undefined) return context.skip("cannot make a file undeletable here (tmpfs as root)");
    try {
      // The process is stopped, the folder is not removable: the removal goes on in the background.
      expect((await first.api.destroy("unremoved")).status).toBe(200);
      expect(await processesUnder(dir)).toEqual([]);
      await kill(first.program);
    } finally {
      await undo();
    }

    const second = await start();
    // The next run takes the removal over; had it given up meanwhile, the platform's destroy finishes it.
    await eventually(async () => {
      const status = await second.api.status("unremoved");
      if (status.status === 500 && /Removal failed/.test(status.text)) await second.api.destroy("unremoved");
      return status.status === 404;
    }, 60_000);
    await gone();
  });
});
