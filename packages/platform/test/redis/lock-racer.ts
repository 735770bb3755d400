/**
 * One contender for a data-directory lock (test/redis/process.test.ts): loads, says "ready",
 * tries the lock on each line "go" and says "won" or "lost", and on "release" releases what it
 * won and says "released"; it holds what it won until then, or until stdin ends.
 */
import { createInterface } from "node:readline";
import { lockDataDir, type DataDirLock } from "../../src/redis/process.js";

const dir = process.argv[2]!;
const lines = createInterface({ input: process.stdin });
let held: DataDirLock | undefined;
process.stdout.write("ready\n");
for await (const line of lines) {
  if (line === "go") {
    held = await lockDataDir(dir).catch(() => undefined);
    process.stdout.write(held ? "won\n" : "lost\n");
  } else if (line === "release") {
    await held?.release();
    held = undefined;
    process.stdout.write("released\n");
  }
}
