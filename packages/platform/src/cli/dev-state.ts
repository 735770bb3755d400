/**
 * What `provider-kit dev` keeps for the provider across its restarts, under the project's
 * .provider-kit/dev: a registry (an embedded redis-server, given to the provider as
 * REGISTRY_STORE) and a data folder (DATA_DIR). Each `dev` starts the registry empty, as its
 * platform starts empty (state in memory): a registry that remembered an earlier run's instances
 * would refuse to create them again. The data folder is kept: a provider may have started servers
 * there that outlive it (the Redis example's dedicated instances). The redis-server is dev's
 * child and dies with it, even on kill -9 (Linux's parent-death signal, see superviseRedisServer).
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { lockDataDir } from "../redis/process.js";
import { removeRedisServer, startOnFreePort, superviseRedisServer, type SupervisionLog } from "../redis/server.js";

/** The project's folder for what dev keeps (a dot folder: dev's watcher passes over it). */
export const DEV_STATE_DIR = path.join(".provider-kit", "dev");

export interface DevState {
  /** The registry's Redis URL, with its password: for the provider's environment only, never printed. */
  registryUrl: string;
  /** The data folder. */
  dataDir: string;
  stop(): Promise<void>;
}

/** Starts the registry's redis-server, emptied, in .provider-kit/dev of `projectDir`. */
export async function startDevState(projectDir: string, log: SupervisionLog, redisServer = "redis-server"): Promise<DevState> {
  // Before anything is touched: a second dev in this project must not stop the first one's server.
  const lock = await lockDataDir(path.join(projectDir, DEV_STATE_DIR), { kind: "provider-kit dev", setting: "--dir" });
  const registryDir = path.join(lock.dir, "registry");
  const dataDir = path.join(lock.dir, "data");
  try {
    // A server a killed run left behind is stopped with its data.
    await removeRedisServer(registryDir);
    const password = randomBytes(24).toString("hex");
    const server = await startOnFreePort((port) => superviseRedisServer({ dir: registryDir, port, password, syncEveryWrite: true, binary: redisServer }, { log }));
    const { host, port } = server.address;
    return {
      registryUrl: `redis://:${password}@${host}:${port}`,
      dataDir,
      async stop() {
        await server.stop();
        await lock.release();
      },
    };
  } catch (error) {
    await lock.release();
    throw error;
  }
}
