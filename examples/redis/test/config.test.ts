import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readConfig } from "../config.js";

describe("configuration from the environment", () => {
  it("needs only PROVIDER_PASSWORD and defaults the rest", () => {
    expect(readConfig({ PROVIDER_PASSWORD: "pw" }, false)).toEqual({
      port: 8080,
      host: undefined,
      username: "redis",
      password: "pw",
      redisUrl: undefined,
      registryRedisUrl: undefined,
      sharedMaxmemory: "256mb",
      sharedMaxmemoryPolicy: "noeviction",
      dataDir: "./.redis-data",
      redisServer: "redis-server",
      dedicatedMaxmemory: "64mb",
      metricsPort: undefined,
      aclSaveIntervalMs: 1000,
      logLevel: "info",
      logFormat: "json",
    });
  });

  it("prints readable logs on a terminal unless LOG_FORMAT says otherwise", () => {
    expect(readConfig({ PROVIDER_PASSWORD: "pw" }, true).logFormat).toBe("pretty");
    expect(readConfig({ PROVIDER_PASSWORD: "pw", LOG_FORMAT: "json" }, true).logFormat).toBe("json");
    expect(readConfig({ PROVIDER_PASSWORD: "pw", LOG_FORMAT: "pretty" }, false).logFormat).toBe("pretty");
  });

  it("lists every bad variable with what to set, and treats empty as unset", () => {
    const read = () =>
      readConfig({
        PROVIDER_PASSWORD: "",
        PORT: "http",
        DEDICATED_MAXMEMORY: "lots",
        REDIS_URL: "localhost:6379",
        REGISTRY_REDIS_URL: "localhost:6380",
        SHARED_MAXMEMORY_POLICY: "lru",
        LOG_FORMAT: "xml",
        ACL_SAVE_INTERVAL_MS: "1s",
      });
    expect(read).toThrow(/PROVIDER_PASSWORD is required/);
    expect(read).toThrow(/REGISTRY_REDIS_URL must look like redis:\/\//);
    expect(read).toThrow(/SHARED_MAXMEMORY_POLICY must be one of noeviction, allkeys-lru/);
    expect(read).toThrow(/LOG_FORMAT must be json or pretty/);
    expect(read).toThrow(/PORT /);
    expect(read).toThrow(/DEDICATED_MAXMEMORY must be a Redis memory size/);
    expect(read).toThrow(/REDIS_URL must look like redis:\/\//);
    expect(read).toThrow(/ACL_SAVE_INTERVAL_MS must be a number of milliseconds/);
  });

  it("reads Sentinel mode from REDIS_SENTINELS and REDIS_SENTINEL_NAME, which go together", () => {
    const sentinels = "127.0.0.1:26379,sentinel-2.internal:26380";
    expect(readConfig({ PROVIDER_PASSWORD: "pw", REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: "registry" }).registrySentinel).toEqual({
      name: "registry",
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "sentinel-2.internal", port: 26380 },
      ],
    });
    expect(() => readConfig({ PROVIDER_PASSWORD: "pw", REDIS_SENTINELS: sentinels })).toThrow(
      /REDIS_SENTINEL_NAME and REDIS_SENTINELS go together: set both for Sentinel mode, or neither/,
    );
    expect(() => readConfig({ PROVIDER_PASSWORD: "pw", REDIS_SENTINELS: "127.0.0.1", REDIS_SENTINEL_NAME: "registry" })).toThrow(
      /REDIS_SENTINELS must be a comma-separated host:port list/,
    );
    expect(() =>
      readConfig({ PROVIDER_PASSWORD: "pw", REDIS_SENTINELS: sentinels, REDIS_SENTINEL_NAME: "registry", REGISTRY_REDIS_URL: "redis://127.0.0.1:6380" }),
    ).toThrow(/REGISTRY_REDIS_URL and REDIS_SENTINELS both place the registry: set one of them/);
  });

  it("ships a service manifest whose username is the provider's default", async () => {
    const manifest = await readFile(new URL("../service.yaml", import.meta.url), "utf8");
    expect(manifest).toMatch(/^id: redis$/m);
    expect(manifest).toMatch(new RegExp(`^username: ${readConfig({ PROVIDER_PASSWORD: "pw" }).username}$`, "m"));
    expect(manifest).toMatch(/^endpoint:\n {2}production: /m);
  });
});
