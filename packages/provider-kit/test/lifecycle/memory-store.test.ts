/** What a `MemoryStore` says at start: what it forgets, and how to choose a durable store. */
import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/lifecycle/memory-store.js";
import { registryLifecycle } from "../../src/lifecycle/registry.js";
import { capturedLog, eventually, steps } from "./helpers.js";

const HANDLERS = { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} };

describe("a MemoryStore", () => {
  it("logs one warning at start saying what it forgets and how to choose a durable store", async () => {
    const { log, lines } = capturedLog();
    const lifecycle = registryLifecycle(HANDLERS, { store: new MemoryStore() }, log, steps);
    try {
      const warning = await eventually(() => lines.find((line) => /MemoryStore/.test(line.msg)));
      expect(warning.level).toBe(40); // warn
      expect(warning.msg).toMatch(/forgotten when this process stops/);
      expect(warning.msg).toMatch(/new RedisStore\(\{ url \}\)/);
      expect(lines.filter((line) => line.level === 40)).toHaveLength(1);
    } finally {
      await lifecycle.close();
    }
  });
});
