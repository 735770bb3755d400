import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { readConfig } from "../config.js";

describe("configuration from the environment", () => {
  it("needs only PROVIDER_PASSWORD and defaults the rest", () => {
    expect(readConfig({ PROVIDER_PASSWORD: "pw" })).toEqual({
      port: 8080,
      host: undefined,
      username: "redis",
      password: "pw",
      redisUrl: undefined,
      dataDir: "./.redis-data",
      redisServer: "redis-server",
      dedicatedMaxmemory: "64mb",
      logLevel: "info",
    });
  });

  it("lists every bad variable with what to set, and treats empty as unset", () => {
    const read = () => readConfig({ PROVIDER_PASSWORD: "", PORT: "http", DEDICATED_MAXMEMORY: "lots", REDIS_URL: "localhost:6379" });
    expect(read).toThrow(/PROVIDER_PASSWORD is required/);
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
