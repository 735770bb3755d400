/** The data-directory lock and the parent watch, with real processes. */
import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { DataDirLockedError, lockDataDir } from "../../src/redis/process.js";
import { killServersUnder, tempDir } from "../../examples/redis/test/support.js";

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
});
