/**
 * One contender for a data-directory lock (test/redis/process.test.ts): loads, says "ready",
 * tries the lock on the line "go", says "won" or "lost", and holds what it won until stdin ends.
 */
import { createInterface } from "node:readline";
import { lockDataDir } from "../../src/redis/process.js";

const dir = process.argv[2]!;
const lines = createInterface({ input: process.stdin });
process.stdout.write("ready\n");
for await (const line of lines) {
  if (line !== "go") continue;
  const won = await lockDataDir(dir).then(
    () => true,
    () => false,
  );
  process.stdout.write(won ? "won\n" : "lost\n");
}
