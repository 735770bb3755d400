/**
 * Sentinel mode (REDIS_SENTINELS, REDIS_SENTINEL_NAME): the registry lives on the primary a
 * Sentinel group names, while `shared` instances stay on the administered server.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { startSentinelGroup, type SentinelGroup } from "../../../test/support/redis-sentinel.js";
import { REGISTRY_KEY_PREFIX, type RunningProvider } from "../redis-provider.js";
import { killServersUnder, platform, startTestProvider, tempDir, testConfig } from "./support.js";

describe("the example with its registry on a Sentinel group", () => {
  let group: SentinelGroup;
  let tenants: RedisServer;
  let dataDir: string;
  let provider: RunningProvider | undefined;

  beforeAll(async () => {
    dataDir = await tempDir("sentinel");
    // With an ACL file, so that the users' changes are journaled in the registry too.
    const aclFile = join(dataDir, "tenants.acl");
    await writeFile(aclFile, "");
    [group, tenants] = await Promise.all([startSentinelGroup(), startRedisServer({ args: ["--aclfile", aclFile] })]);
  });
  afterAll(async () => {
    await provider?.close();
    await killServersUnder(dataDir);
    await Promise.all([group?.stop(), tenants?.stop()]);
  });

  const keysOf = async (url: string, pattern: string) => {
    const client = createClient({ url });
    await client.connect();
    try {
      return (await client.keys(pattern)).sort();
    } finally {
      client.destroy();
    }
  };

  it("keeps instances and bindings on the Sentinel primary, replicated, and the tenants' keys on REDIS_URL", async () => {
    provider = await startTestProvider(testConfig({ dataDir, redisUrl: tenants.url, registrySentinel: group.address }));
    const api = platform(provider.url);
    expect((await api.create("cache", "shared")).status).toBe(201);
    expect((await api.bindApp("cache", "web")).status).toBe(201);

    // The census (counts for the metrics) is written with them, by the same scripts; the journal
    // of the users' changes (see acl-journal.ts) too.
    const registryKeys = [
      `${REGISTRY_KEY_PREFIX}acl-journal`,
      `${REGISTRY_KEY_PREFIX}bindings:cache`,
      `${REGISTRY_KEY_PREFIX}census`,
      `${REGISTRY_KEY_PREFIX}instance:cache`,
    ];
    expect(await keysOf(group.primary.url, `${REGISTRY_KEY_PREFIX}*`)).toEqual(registryKeys);
    // Each write waited for the replica: it has them already.
    expect(await keysOf(group.replica.url, `${REGISTRY_KEY_PREFIX}*`)).toEqual(registryKeys);
    expect(await keysOf(tenants.url, `${REGISTRY_KEY_PREFIX}*`)).toEqual([]);
  });
});
