import { configDefaults, defineConfig } from "vitest/config";

/** Every package's tests, the example's and the repository's own (docs, the shared support). */
const TESTS = ["packages/*/test/**/*.test.ts", "examples/*/test/**/*.test.ts", "test/**/*.test.ts"];

/**
 * The slow set (`npm run test:slow`): files that start the CLI, the platform or providers as
 * processes, install packages, kill servers to watch them recover, or drive a browser. Each
 * works in its own temporary folders on ports the OS chooses, so two run side by side.
 */
const SLOW = [
  "packages/provider-kit/test/template/**/*.test.ts",
  "packages/provider-kit/test/cli/exit-codes.test.ts",
  "packages/redis-store/test/failover.test.ts",
  "packages/redis-store/test/replicas.test.ts",
  "packages/conformance/test/conformance/cli.test.ts",
  "packages/platform/test/redis/process.test.ts",
  "packages/platform/test/redis/server.test.ts",
  "packages/platform/test/platform/cli-seed.test.ts",
  "packages/platform/test/platform/security.test.ts",
  "packages/platform/test/platform/timeline-flood.test.ts",
  "packages/platform/test/platform/e2e-redis.test.ts",
  "packages/platform/test/platform/e2e-multi-cluster.test.ts",
  "packages/platform/test/platform/embedded-redis.test.ts",
  "packages/platform/test/platform/dev.test.ts",
  "packages/platform/test/platform/*-browser.test.ts",
  "examples/redis/test/main.test.ts",
  "examples/redis/test/dedicated.test.ts",
  "examples/redis/test/dedicated-crash.test.ts",
  "examples/redis/test/acl-file.test.ts",
  "examples/redis/test/operations.test.ts",
  "test/docs/commands/walks.test.ts",
  "test/support/redis-server.test.ts",
];

/** In both sets: the run fails if a redis-server a test started outlives the run (test/server-records-setup.ts). */
const SERVER_RECORDS = "test/server-records-setup.ts";

// Workspace packages import each other by name; "source" resolves those names to their
// TypeScript sources (see each package.json's exports), so tests need no build first.
// Vite's defaults follow it.
export default defineConfig({
  resolve: { conditions: ["source", "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: ["source", "module", "node", "development|production"] } },
  test: {
    // Vitest's defaults: a test that needs longer waits on too much, or on a sleep.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    poolOptions: {
      // The fast set: one project, so one batch in worker threads sharing their loaded modules
      // (vitest recycles the workers between projects). Its files leave no global state behind,
      // and loading express, pino, zod and the sources again for each file would be most of
      // their time. They mostly wait on Redis and HTTP: one worker per core.
      threads: { isolate: false, maxThreads: "100%" },
      // The slow set: each file in a process of its own, two at a time (vitest's default is one
      // fewer than the cores: one on a 2-core machine); their time is mostly spent waiting on
      // the processes they start.
      forks: { maxForks: 2 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "fast",
          include: TESTS,
          exclude: [...configDefaults.exclude, ...SLOW],
          pool: "threads",
          globalSetup: [SERVER_RECORDS],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "slow",
          include: SLOW,
          pool: "forks",
          // dist/ is built once here, never by a test file while others read it: the template's
          // tests pack the packages and run the built CLI.
          globalSetup: ["test/global-setup.ts", SERVER_RECORDS],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
