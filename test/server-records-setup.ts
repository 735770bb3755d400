/**
 * Every project's globalSetup: names the folder where test/support/redis-server.ts records the
 * servers the run starts, and at the end fails the run if one of them is still running, after
 * killing it. One folder per vitest process, so a run started inside a test keeps its own.
 */
import { mkdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { RECORDS_VARIABLE, survivors, unstopped } from "./support/server-records.js";

export default function recordServers(): () => void {
  const dir = path.join(tmpdir(), `provider-kit-test-servers-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  process.env[RECORDS_VARIABLE] = dir;
  return () => {
    const left = survivors(dir);
    // A server killed with its test process (parent-death signal) never removed its folder.
    for (const record of unstopped(dir)) rmSync(record.dir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    if (left.length === 0) return;
    for (const { pid } of left) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone meanwhile.
      }
    }
    const lines = left.map(({ pid, command, startedBy }) => `  pid ${pid} (${command}), started by ${startedBy}`);
    throw new Error(`Redis servers the tests started outlived them (killed now): stop each in the test's afterAll or finally.\n${lines.join("\n")}`);
  };
}
