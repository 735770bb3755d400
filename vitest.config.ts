import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
    // Tests start real redis-server processes and HTTP servers; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
