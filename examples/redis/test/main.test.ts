/**
 * main.ts as a real program, the way `npm start` runs it: its own process, configured by the
 * environment, with an embedded redis-server, stopped by SIGTERM.
 * It runs as `node --import tsx examples/redis/main.ts`, what `npx tsx` ends up running, minus
 * the wrapper processes (npm, tsx's own parent): signals reach the program itself and its exit
 * code is the one observed, and a SIGKILL leaves no orphan behind.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readdir } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appClient, bindEnv, eventually, isAlive, killServersUnder, pidIn, platform, tempDir } from "./support.js";


interface Program {
  child: ChildProcess;
  output(): string;
  exit: Promise<number | null>;
}

function run(env: Record<string, string>): Program {
  const child = spawn(process.execPath, ["--import", "tsx", "examples/redis/main.ts"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exit = once(child, "exit").then(([code]) => code as number | null);
  return { child, output: () => output, exit };
}

/** The address from the "listening" log line (the program listens on a free port, PORT=0). */
function listeningUrl(output: string): string | undefined {
  for (const line of output.split("\n")) {
    if (line.includes('"Redis provider listening"')) return (JSON.parse(line) as { url: string }).url;
  }
  return undefined;
}

describe("examples/redis/main.ts as a process", () => {
  const programs: Program[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const program of programs.splice(0)) {
      if (program.child.exitCode === null && program.child.signalCode === null) {
        program.child.kill("SIGKILL");
        await program.exit;
      }
    }
    await Promise.all(dirs.splice(0).map((dir) => killServersUnder(dir)));
  });

  it("refuses to start without PROVIDER_PASSWORD and says what to set", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const program = run({ DATA_DIR: dataDir });
    programs.push(program);
    expect(await program.exit).toBe(1);
    expect(program.output()).toMatch(/PROVIDER_PASSWORD is required/);
  });

  it("says how to install redis-server when it is missing", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const program = run({ PROVIDER_PASSWORD: "pw", DATA_DIR: dataDir, REDIS_SERVER: "/nonexistent/redis-server" });
    programs.push(program);
    expect(await program.exit).toBe(1);
    expect(program.output()).toMatch(/apt-get install redis-server.*brew install redis/);
  });

  it("stops its embedded Redis when it cannot listen", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const taken = createServer().listen(0, "127.0.0.1");
    await once(taken, "listening");
    const { port } = taken.address() as AddressInfo;
    try {
      const program = run({ PROVIDER_PASSWORD: "pw", PORT: String(port), HOST: "127.0.0.1", DATA_DIR: dataDir });
      programs.push(program);
      expect(await program.exit).toBe(1);
      // One plain line, no stack trace.
      expect(program.output()).toBe(`Port ${port} on 127.0.0.1 is already in use: stop what listens there, or set PORT (or METRICS_PORT) to a free port.\n`);
      const embeddedPid = await pidIn(join(dataDir, "embedded"));
      expect(embeddedPid === undefined || !isAlive(embeddedPid)).toBe(true);
    } finally {
      taken.close();
    }
  });

  it("serves the platform with an embedded Redis, then stops cleanly on SIGTERM", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const program = run({ PROVIDER_PASSWORD: "platform-secret", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir });
    programs.push(program);
    await eventually(() => listeningUrl(program.output()) !== undefined || program.child.exitCode !== null, 60_000);
    const url = listeningUrl(program.output());
    if (!url) throw new Error(`main.ts did not start:\n${program.output()}`);
    expect((await fetch(`${url}/healthcheck`)).status).toBe(200);

    const api = platform(url);
    expect((await api.create("cache", "shared")).status).toBe(201);
    const env = bindEnv(await api.bindApp("cache", "web"));
    const app = await appClient(env);
    await app.set("cache:hello", "world");
    app.destroy();
    expect((await api.create("db", "dedicated")).status).toBe(201);
    await eventually(async () => (await api.status("db")).status === 204);
    expect((await api.destroy("db")).status).toBe(200);
    expect((await api.destroy("cache")).status).toBe(200);

    const embeddedPid = (await pidIn(join(dataDir, "embedded")))!;
    expect(isAlive(embeddedPid)).toBe(true);
    program.child.kill("SIGTERM");
    expect(await program.exit).toBe(0);
    expect(isAlive(embeddedPid)).toBe(false);
    expect(await readdir(join(dataDir, "instances"))).toEqual([]);
    // Secrets never reach the log.
    expect(program.output()).not.toContain("platform-secret");
    expect(program.output()).not.toContain(env.REDIS_PASSWORD);
  });

  it("loses nothing when it crashes and starts again on the same data directory", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const env = { PROVIDER_PASSWORD: "platform-secret", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir };
    const start = async () => {
      const program = run(env);
      programs.push(program);
      await eventually(() => listeningUrl(program.output()) !== undefined || program.child.exitCode !== null, 60_000);
      const url = listeningUrl(program.output());
      if (!url) throw new Error(`main.ts did not start:\n${program.output()}`);
      return { program, api: platform(url) };
    };

    const first = await start();
    await first.api.create("cache", "shared");
    const appEnv = bindEnv(await first.api.bindApp("cache", "web"));
    first.program.child.kill("SIGKILL"); // no clean-up at all (its embedded servers get the parent-death signal)

    const second = await start();
    expect((await second.api.status("cache")).status).toBe(204);
    // Same server port and the app's user survived: the app needs no new bind.
    const app = await appClient(appEnv);
    expect(await app.ping()).toBe("PONG");
    app.destroy();
    second.program.child.kill("SIGTERM");
    expect(await second.program.exit).toBe(0);
  });
});
