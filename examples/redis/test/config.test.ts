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
      });
    expect(read).toThrow(/PROVIDER_PASSWORD is required/);
    expect(read).toThrow(/REGISTRY_REDIS_URL must look like redis:\/\//);
    expect(read).toThrow(/SHARED_MAXMEMORY_POLICY must be one of noeviction, allkeys-lru/);
    expect(read).toThrow(/LOG_FORMAT must be json or pretty/);
    expect(read).toThrow(/PORT /);
    expect(read).toThrow(/DEDICATED_MAXMEMORY must be a Redis memory size/);
    expect(read).toThrow(/REDIS_URL must look like redis:\/\//);
  });

  it("ships a service manifest whose username is the provider's default", async () => {
    const manifest = await readFile(new URL("../service.yaml", import.meta.url), "utf8");
    expect(manifest).toMatch(/^id: redis$/m);
    expect(manifest).toMatch(new RegExp(`^username: ${readConfig({ PROVIDER_PASSWORD: "pw" }).username}$`, "m"));
    expect(manifest).toMatch(/^endpoint:\n {2}production: /m);
  });
});
