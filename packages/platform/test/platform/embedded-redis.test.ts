/** The platform's embedded redis-server (the default state) is restarted when it dies, with its data. */
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runningPid } from "../../src/redis/server.js";
import { eventually } from "../../../../test/support/eventually.js";
import { killServersUnder, tempDir } from "../../../../test/support/data-dirs.js";
import { REDIS_SERVER } from "../../../../test/support/redis-server.js";
import { removeDir } from "../../../../test/support/redis-example.js";
import { startTestPlatform, type TestPlatform } from "./helpers.js";

describe("the platform's embedded redis-server", () => {
  let dataDir: string;
  let t: TestPlatform;
  const said: string[] = [];

  beforeAll(async () => {
    dataDir = await tempDir("platform-embedded");
    t = await startTestPlatform("memory", {
      state: { kind: "embedded", dataDir, redisServer: REDIS_SERVER },
      say: (line) => said.push(line),
      report: () => {}, // the outage's errors, expected here
    });
  });

  afterAll(async () => {
    await t?.stop();
    await killServersUnder(dataDir);
    await removeDir(dataDir);
  });

  it("is restarted after it dies, the platform says so, and the state written before is still there", async () => {
    await t.admin.ok(t.admin.post("/teams", { json: { name: "before-crash" } }));
    const serverDir = join(dataDir, "redis");
    const first = (await runningPid(serverDir))!;
    process.kill(first, "SIGKILL");

    // Until it is back, calls are answered 503, to retry, never 500.
    const statuses = new Set<number>();
    const refusals = new Set<string>();
    await eventually(async () => {
      const answer = await t.admin.get("/teams");
      statuses.add(answer.status);
      // Kept for after the wait: a failed expect inside the probe would only make it poll again.
      if (answer.status === 503) refusals.add(answer.text);
      return answer.status === 200 && (await runningPid(serverDir)) !== first;
    });
    expect([...statuses].filter((status) => status !== 200 && status !== 503)).toEqual([]);
    for (const text of refusals) expect(text).toMatch(/cannot reach the Redis that holds its state.*try again/);
    expect((await t.admin.get("/teams")).json()).toEqual([{ name: "admin" }, { name: "before-crash" }]);
    expect(said).toContainEqual(expect.stringMatching(/^embedded redis-server exited; restarting it \(.*signal SIGKILL/));
    await t.admin.ok(t.admin.post("/teams", { json: { name: "after-crash" } }));
  });
});
