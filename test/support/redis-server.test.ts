/**
 * A redis-server started for a test never outlives the test process: killed with it (the
 * parent-death signal), and recorded until stopped so the run's teardown can tell one that
 * lingers (test/server-records-setup.ts).
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { eventually } from "./eventually.js";
import { isAlive, startRedisServer } from "./redis-server.js";
import { RECORDS_VARIABLE, survivors } from "./server-records.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

it.runIf(process.platform === "linux")("dies with the process that started it, even one killed by SIGKILL, and is recorded until then", async () => {
  const records = await mkdtemp(path.join(tmpdir(), "provider-kit-test-records-"));
  const starter = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "test/support/fixtures/start-redis-server.ts"], {
    cwd: ROOT,
    env: { ...process.env, [RECORDS_VARIABLE]: records },
    stdio: ["ignore", "pipe", "inherit"],
  });
  try {
    let stdout = "";
    starter.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    const pid = Number(await eventually(() => /^(\d+)\n/.exec(stdout)?.[1], 30_000, "the started server's pid"));
    expect(survivors(records)).toEqual([expect.objectContaining({ pid, startedBy: "a file the stack does not name" })]);

    starter.kill("SIGKILL");
    await eventually(() => survivors(records).length === 0, 10_000, "the server gone with the process that started it");
  } finally {
    starter.kill("SIGKILL");
    // Without the parent-death signal the server would run on: this test leaves none behind either way.
    for (const { pid } of survivors(records)) process.kill(pid, "SIGKILL");
    await rm(records, { recursive: true, force: true });
  }
});

it("names the test file that started a server, and forgets the server once stopped", async () => {
  const server = await startRedisServer();
  const records = process.env[RECORDS_VARIABLE];
  try {
    expect(isAlive(server.pid)).toBe(true);
    if (records !== undefined) expect(survivors(records)).toContainEqual(expect.objectContaining({ pid: server.pid, startedBy: import.meta.filename }));
  } finally {
    await server.stop();
  }
  if (records !== undefined) expect(survivors(records).map(({ pid }) => pid)).not.toContain(server.pid);
});
