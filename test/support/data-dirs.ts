/**
 * Temporary data directories of the tests that run redis-servers under them (the Redis
 * example's, the platform's), and their clean-up: every server recorded there killed, then the
 * folder removed.
 */
import { chmod, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runningPid } from "@provider-kit/platform/redis-server";
import { REDIS_SERVER } from "./redis-server.js";

export async function tempDir(name: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `redis-provider-${name}-`));
}

/**
 * A `redis-server` that waits `seconds` before starting: a real server whose provisioning lasts
 * long enough to be seen pending, or interrupted.
 */
export async function slowRedisServer(dir: string, seconds: number): Promise<string> {
  const path = join(dir, "slow-redis-server");
  await writeFile(path, `#!/bin/sh\nsleep ${seconds}\nexec ${REDIS_SERVER} "$@"\n`);
  await chmod(path, 0o755);
  return path;
}

/** Kills every redis-server recorded under `dataDir` (a failed test must not leave any behind). */
export async function killServersUnder(dataDir: string): Promise<void> {
  const dirs = [join(dataDir, "embedded"), join(dataDir, "registry"), ...(await readdir(join(dataDir, "instances")).catch(() => [])).map((name) => join(dataDir, "instances", name))];
  for (const dir of dirs) {
    const pid = await runningPid(dir);
    if (pid !== undefined) process.kill(pid, "SIGKILL");
  }
  await rm(dataDir, { recursive: true, force: true });
}
