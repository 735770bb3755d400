/** What a `MemoryStore` says at start: what it forgets, and how to choose a durable store. */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
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
      expect(warning.msg).toMatch(/such as RedisStore from @provider-kit\/redis-store \(.*redis-store\.md\)/);
      expect(lines.filter((line) => line.level === 40)).toHaveLength(1);
    } finally {
      await lifecycle.close();
    }
  });

  it("cites the Redis store's page as a path that opens from the working directory, wherever that is", async () => {
    // Another directory than the repository's root, where docs/operations/redis-store.md does not open.
    const cwd = path.resolve(import.meta.dirname, "..");
    const module = path.resolve(import.meta.dirname, "../../src/lifecycle/memory-store.ts");
    const script = `const { MemoryStore } = await import(${JSON.stringify(module)}); console.log(await new MemoryStore().persistenceWarning());`;
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], { cwd });
    const cited = /\(([^()]+\.md)\)\.$/.exec(stdout.trim())?.[1];
    expect(cited, stdout).toBeDefined();
    expect(path.isAbsolute(cited!)).toBe(false);
    expect(existsSync(path.resolve(cwd, cited!)), `${cited} from ${cwd}`).toBe(true);
  });

  it("says the provider's own advice for production when given one", async () => {
    const advice = "For production, set REGISTRY_STORE to a Redis URL.";
    const warning = await new MemoryStore({ productionAdvice: advice }).persistenceWarning();
    expect(warning).toMatch(/forgotten when this process stops/);
    expect(warning.endsWith(` ${advice}`)).toBe(true);
    expect(warning).not.toMatch(/RedisStore/);
  });
});
