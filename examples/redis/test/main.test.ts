/**
 * main.ts as a real program: its own process, configured by the environment, with its embedded
 * redis-servers, stopped by SIGTERM (or Ctrl-C). Most tests run it as `node --import tsx examples/redis/main.ts`
 * (what `npm start` runs, minus npm and its shell), so signals reach the program itself and its
 * exit code is the one observed; others run `npm start` itself, or a shell that dies under it.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { appClient, bindEnv, eventually, isAlive, killServersUnder, PASSWORD, pidIn, platform, tempDir } from "./support.js";


interface Program {
  child: ChildProcess;
  output(): string;
  exit: Promise<number | null>;
}

const MAIN = ["--conditions=source", "--import", "tsx", "examples/redis/main.ts"];

/** `detached`: in a process group of its own, as a terminal's foreground job is (Ctrl-C signals the whole group). */
function run(env: Record<string, string>, command: readonly string[] = [process.execPath, ...MAIN], detached = false): Program {
  const child = spawn(command[0]!, command.slice(1), {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_FORMAT: "json", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached,
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exit = once(child, "exit").then(([code]) => code as number | null);
  return { child, output: () => output, exit };
}

/** The start-up log line (the program listens on a free port, PORT=0). */
function listeningLine(output: string): Record<string, string> | undefined {
  for (const line of output.split("\n")) {
    if (line.includes('"Redis provider listening"')) return JSON.parse(line) as Record<string, string>;
  }
  return undefined;
}

function listeningUrl(output: string): string | undefined {
  return listeningLine(output)?.url;
}

/** Waits for the program's start-up line and returns its URL. */
async function started(program: Program): Promise<string> {
  await eventually(() => listeningUrl(program.output()) !== undefined || program.child.exitCode !== null, 60_000);
  const url = listeningUrl(program.output());
  if (!url) throw new Error(`main.ts did not start:\n${program.output()}`);
  return url;
}

/** Pids of the provider (from its data-directory lock) and of its embedded servers. */
async function processesOf(dataDir: string): Promise<number[]> {
  const provider = Number.parseInt(await readFile(join(dataDir, "provider.lock"), "utf8"), 10);
  const servers = await Promise.all(["embedded", "registry"].map((name) => pidIn(join(dataDir, name))));
  return [provider, ...servers.filter((pid): pid is number => pid !== undefined)];
}

// Each test starts the example (and its redis-servers) as processes, some twice: on a loaded CI
// runner one start alone has taken 15 s, so the tests get the time their own waits allow.
describe("examples/redis/main.ts as a process", { timeout: 180_000 }, () => {
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
    const [, ...servers] = await processesOf(dataDir);
    first.program.child.kill("SIGKILL"); // no clean-up at all
    // Linux: the embedded servers get the parent-death signal (elsewhere the next start stops them).
    if (process.platform === "linux") await eventually(() => !servers.some(isAlive), 15_000);

    const second = await start();
    expect((await second.api.status("cache")).status).toBe(204);
    // Same server port and the app's user survived: the app needs no new bind.
    const app = await appClient(appEnv);
    expect(await app.ping()).toBe("PONG");
    app.destroy();
    second.program.child.kill("SIGTERM");
    expect(await second.program.exit).toBe(0);
  });

  it("stops with its embedded servers when npm start gets SIGTERM", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const npm = run({ PROVIDER_PASSWORD: "pw", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir }, ["npm", "start", "--silent"]);
    programs.push(npm);
    await started(npm);
    const pids = await processesOf(dataDir);
    expect(pids).toHaveLength(3);
    expect(pids.every(isAlive)).toBe(true);
    npm.child.kill("SIGTERM"); // what a supervisor or a container runtime sends
    await eventually(() => !pids.some(isAlive), 15_000);
    expect(npm.output()).toContain('"msg":"Redis provider stopped"');
  });

  it("stops on Ctrl-C at npm start (SIGINT to the whole process group) without an error line, exit 0", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const npm = run({ PROVIDER_PASSWORD: "pw", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir }, ["npm", "start", "--silent"], true);
    programs.push(npm);
    await started(npm);
    const pids = await processesOf(dataDir);
    process.kill(-npm.child.pid!, "SIGINT"); // what the terminal sends its foreground process group on Ctrl-C
    expect(await npm.exit).toBe(0);
    await eventually(() => !pids.some(isAlive), 15_000);
    expect(npm.output()).toContain('"msg":"Redis provider stopped"');
    expect(npm.output()).not.toMatch(/"level":50|exited; restarting it/);
  });

  it("stops with its embedded servers when its parent dies without passing a signal on", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    // A parent that is killed outright (SIGKILL) leaves the provider re-parented.
    const shell = run({ PROVIDER_PASSWORD: "pw", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir }, [
      "sh",
      "-c",
      `"${process.execPath}" ${MAIN.join(" ")} & wait`,
    ]);
    programs.push(shell);
    await started(shell);
    const pids = await processesOf(dataDir);
    shell.child.kill("SIGKILL");
    await eventually(() => !pids.some(isAlive), 15_000);
  });

  it("refuses a second start on the same data directory, naming the holder, and leaves the first one working", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const env = { PROVIDER_PASSWORD: PASSWORD, PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir };
    const first = run(env);
    programs.push(first);
    const url = await started(first);
    const [providerPid, ...serverPids] = await processesOf(dataDir);

    const second = run(env);
    programs.push(second);
    expect(await second.exit).toBe(1);
    expect(second.output()).toBe(
      `Another provider (pid ${providerPid}) is using the data directory ${dataDir}. Stop it first, or set DATA_DIR to another folder. ` +
        `If no such process is a provider, delete ${join(dataDir, "provider.lock")}.\n`,
    );
    expect(serverPids.every(isAlive)).toBe(true);
    expect((await platform(url).create("cache", "shared")).status).toBe(201);
    expect((await fetch(`${url}/healthcheck?check=all`)).status).toBe(200);
  });

  it("logs where its data and embedded servers are at start-up, and a last line at shutdown", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const program = run({ PROVIDER_PASSWORD: "pw", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir });
    programs.push(program);
    await started(program);
    const line = listeningLine(program.output())!;
    const port = (name: string) => (/^port (\d+)$/m.exec(readFileSync(join(dataDir, name, "redis.conf"), "utf8")) ?? [])[1];
    expect(line).toMatchObject({
      dataDir,
      administeredRedis: `127.0.0.1:${port("embedded")} (embedded, ${join(dataDir, "embedded")})`,
      registryRedis: `127.0.0.1:${port("registry")} (embedded, ${join(dataDir, "registry")})`,
    });
    expect(port("embedded")).not.toBe(port("registry"));
    program.child.kill("SIGTERM");
    expect(await program.exit).toBe(0);
    const lines = program.output().trimEnd().split("\n");
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ msg: "Redis provider stopped" });
  });

  it("prints readable lines with LOG_FORMAT=pretty", async () => {
    const dataDir = await tempDir("main");
    dirs.push(dataDir);
    const program = run({ PROVIDER_PASSWORD: "pw", PORT: "0", HOST: "127.0.0.1", DATA_DIR: dataDir, LOG_FORMAT: "pretty" });
    programs.push(program);
    await eventually(() => program.output().includes("Redis provider listening"), 60_000);
    expect(program.output()).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Redis provider listening$/m);
    expect(program.output()).toContain(`    dataDir: "${dataDir}"`);
    expect(program.output()).not.toContain('{"level"');
    program.child.kill("SIGTERM");
    expect(await program.exit).toBe(0);
    expect(program.output()).toMatch(/INFO: Redis provider stopped\n$/);
  });
});
