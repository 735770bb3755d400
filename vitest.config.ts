import { configDefaults, defineConfig } from "vitest/config";

/**
 * The slow set (`npm run test:slow`): files that start the CLI, the platform or providers as
 * processes, install packages, kill servers to watch them recover, or drive a browser. The rest
 * is the fast set (`npm run test:fast`), the inner loop; `npm test` runs both, the fast set first.
 */
const SLOW = [
  "test/template/**/*.test.ts",
  "test/conformance/cli.test.ts",
  "test/lifecycle/failover.test.ts",
  "test/lifecycle/replicas.test.ts",
  "test/redis/process.test.ts",
  "test/redis/server.test.ts",
  "test/platform/cli-seed.test.ts",
  "test/platform/security.test.ts",
  "test/platform/e2e-redis.test.ts",
  "test/platform/e2e-multi-cluster.test.ts",
  "test/platform/embedded-redis.test.ts",
  "test/platform/*-browser.test.ts",
  "test/docs/commands/walks.test.ts",
  "examples/redis/test/main.test.ts",
  "examples/redis/test/dedicated.test.ts",
  "examples/redis/test/acl-file.test.ts",
  "examples/redis/test/operations.test.ts",
];

export default defineConfig({
  test: {
    // Tests start real redis-server processes and HTTP servers; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // The fast set runs in worker threads sharing their loaded modules: its files leave no global
    // state behind, and loading express, pino, zod and the sources again for each file would be
    // most of its time. They mostly wait on Redis and HTTP, so one worker per core.
    poolOptions: { threads: { isolate: false, maxThreads: "100%" } },
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: ["test/**/*.test.ts", "examples/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...SLOW],
          pool: "threads",
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "slow",
          include: SLOW,
          // dist/ is built once here, never by a test file while others read it: the template's
          // tests pack the package and run the built CLI.
          globalSetup: ["test/global-setup.ts"],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
