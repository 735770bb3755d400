/**
 * The tests' time limits, in one place. A test may take up to testTimeout; a test that waits for
 * an instance to be ready (a create answered 202, finished in `provision`) waits until shortly
 * before it, so a create that takes a while passes, and one that never finishes fails saying so.
 * Raise testTimeout if your create takes longer.
 */
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 120_000,
  },
});
