/** The data-directory lock and the parent watch, with real processes. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, utimes, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLockedError, lockDataDir } from "../../src/redis/process.js";
import { killServersUnder, tempDir } from "../../../../test/support/data-dirs.js";

describe("the data-directory lock", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => killServersUnder(dir)));
  });

  async function dataDir(): Promise<string> {
    const dir = await tempDir("lock");
    dirs.push(dir);
    return dir;
  }

  it("is refused while its holder lives, naming the holder and the folder, and free again once released", async () => {
    const dir = await dataDir();
    const lock = await lockDataDir(dir);
    expect(await readFile(join(dir, "provider.lock"), "utf8")).toBe(`${process.pid}\n`);
    const second = lockDataDir(dir);
    await expect(second).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(second).rejects.toThrow(`Another provider (pid ${process.pid}) is using the data directory ${dir}.`);
    await lock.release();
    await (await lockDataDir(dir)).release();
  });

  it("is taken over from a holder that died without releasing it", async () => {
    const dir = await dataDir();
    const gone = spawn("true");
    await once(gone, "exit");
    await writeFile(join(dir, "provider.lock"), `${gone.pid}\n`);
    const lock = await lockDataDir(dir);
    expect(await readFile(join(dir, "provider.lock"), "utf8")).toBe(`${process.pid}\n`);
    await lock.release();
  });

  it("is taken over when it names this process's own pid but this process does not hold it (PID 1 restarted)", async () => {
    const dir = await dataDir();
    await writeFile(join(dir, "provider.lock"), `${process.pid}\n`);
    const lock = await lockDataDir(dir);
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirLockedError);
    await lock.release();
  });

  it("is taken over from a live process that is not a provider (a container's init, a pid now another program's)", async () => {
    const dir = await dataDir();
    const other = spawn("sleep", ["600"]);
    try {
      await once(other, "spawn");
      await writeFile(join(dir, "provider.lock"), `${other.pid}\n`);
      const lock = await lockDataDir(dir);
      expect(await readFile(join(dir, "provider.lock"), "utf8")).toBe(`${process.pid}\n`);
      await lock.release();
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("is taken over from a live node process that started after the lock was written (a recycled pid)", async () => {
    const dir = await dataDir();
    const lockFile = join(dir, "provider.lock");
    const later = spawn(process.execPath, ["-e", "setInterval(() => {}, 60_000)"]);
    try {
      await once(later, "spawn");
      await writeFile(lockFile, `${later.pid}\n`);
      const anHourAgo = new Date(Date.now() - 3_600_000);
      await utimes(lockFile, anHourAgo, anHourAgo); // written by a provider that has died since
      const lock = await lockDataDir(dir);
      expect(await readFile(lockFile, "utf8")).toBe(`${process.pid}\n`);
      await lock.release();
    } finally {
      later.kill("SIGKILL");
    }
  });

  // Six processes for every round, spawned once: starting node processes by the dozen is what a loaded machine does slowly.
  it("goes to exactly one of several processes taking over a dead holder's lock at once", { timeout: 120_000 }, async () => {
    const dir = await dataDir();
    const gone = spawn("true");
    await once(gone, "exit");
    const racers = Array.from({ length: 6 }, () =>
      spawn(process.execPath, ["--conditions=source", "--import", "tsx", join(import.meta.dirname, "lock-racer.ts"), dir], { stdio: ["pipe", "pipe", "inherit"] }),
    );
    try {
      const said = racers.map((racer) => lines(racer.stdout));
      expect(await Promise.all(said.map((next) => next()))).toEqual(racers.map(() => "ready"));
      for (let round = 0; round < 10; round++) {
        await writeFile(join(dir, "provider.lock"), `${gone.pid}\n`);
        for (const racer of racers) racer.stdin.write("go\n");
        const outcomes = await Promise.all(said.map((next) => next()));
        expect(outcomes.filter((outcome) => outcome === "won")).toHaveLength(1);
        expect(outcomes.filter((outcome) => outcome === "lost")).toHaveLength(5);
        for (const racer of racers) racer.stdin.write("release\n");
        await Promise.all(said.map((next) => next()));
      }
    } finally {
      for (const racer of racers) racer.stdin.end();
      await Promise.all(racers.filter((racer) => racer.exitCode === null).map((racer) => once(racer, "exit")));
    }
  });
});

/** Reads a child's output a line at a time: each call answers the next line. */
function lines(stream: NodeJS.ReadableStream): () => Promise<string> {
  const reader: AsyncIterator<string> = createInterface({ input: stream })[Symbol.asyncIterator]();
  return async () => {
    const { value, done } = await reader.next();
    if (done) throw new Error("the process ended without saying won or lost");
    return value;
  };
}
