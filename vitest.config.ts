import { configDefaults, defineConfig, type TestProjectInlineConfiguration } from "vitest/config";

/**
 * One project per package (and one for the repository's docs), each in two sets. The slow set
 * (`npm run test:slow`, projects named `<package>:slow`): files that start the CLI, the platform or
 * providers as processes, install packages, kill servers to watch them recover, or drive a browser.
 * The rest is the fast set (`npm run test:fast`), the inner loop; `npm test` runs both, the fast
 * sets first. A package's own `npm test` runs its two projects.
 */
const PACKAGES: Record<string, { dir: string; slow: string[] }> = {
  "provider-kit": {
    dir: "packages/provider-kit",
    slow: ["test/template/**/*.test.ts", "test/lifecycle/failover.test.ts", "test/lifecycle/replicas.test.ts"],
  },
  conformance: { dir: "packages/conformance", slow: ["test/conformance/cli.test.ts"] },
  platform: {
    dir: "packages/platform",
    slow: [
      "test/redis/process.test.ts",
      "test/redis/server.test.ts",
      "test/platform/cli-seed.test.ts",
      "test/platform/security.test.ts",
      "test/platform/e2e-redis.test.ts",
      "test/platform/e2e-multi-cluster.test.ts",
      "test/platform/embedded-redis.test.ts",
      "test/platform/dev.test.ts",
      "test/platform/*-browser.test.ts",
    ],
  },
  "example-redis": {
    dir: "examples/redis",
    slow: ["test/main.test.ts", "test/dedicated.test.ts", "test/dedicated-crash.test.ts", "test/acl-file.test.ts", "test/operations.test.ts"],
  },
  docs: { dir: "test/docs", slow: ["commands/walks.test.ts"] },
  "test-support": { dir: "test/support", slow: ["redis-server.test.ts"] },
};

/** In every project: the run fails if a redis-server a test started outlives the run (test/server-records-setup.ts). */
const SERVER_RECORDS = "test/server-records-setup.ts";

function projects(name: string, { dir, slow }: { dir: string; slow: string[] }): TestProjectInlineConfiguration[] {
  const inDir = (pattern: string) => `${dir}/${pattern}`;
  const fast: TestProjectInlineConfiguration = {
    extends: true,
    test: {
      name,
      include: [inDir("**/*.test.ts")],
      exclude: [...configDefaults.exclude, ...slow.map(inDir)],
      pool: "threads",
      globalSetup: [SERVER_RECORDS],
      sequence: { groupOrder: 0 },
    },
  };
  if (slow.length === 0) return [fast];
  return [
    fast,
    {
      extends: true,
      test: {
        name: `${name}:slow`,
        include: slow.map(inDir),
        // dist/ is built once here, never by a test file while others read it: the template's
        // tests pack the packages and run the built CLI.
        globalSetup: ["test/global-setup.ts", SERVER_RECORDS],
        sequence: { groupOrder: 1 },
      },
    },
  ];
}

// Workspace packages import each other by name; "source" resolves those names to their
// TypeScript sources (see each package.json's exports), so tests need no build first.
// Vite's defaults follow it.
export default defineConfig({
  resolve: { conditions: ["source", "module", "browser", "development|production"] },
  ssr: { resolve: { conditions: ["source", "module", "node", "development|production"] } },
  test: {
    // Tests start real redis-server processes, HTTP servers and CLIs through tsx; in a full run
    // beside other CPU-bound work, single tests that spawn processes took over 30 s.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // The fast sets run in worker threads sharing their loaded modules: their files leave no
    // global state behind, and loading express, pino, zod and the sources again for each file
    // would be most of their time. They mostly wait on Redis and HTTP, so one worker per core.
    poolOptions: { threads: { isolate: false, maxThreads: "100%" } },
    projects: [
      ...Object.entries(PACKAGES).flatMap(([name, set]) => projects(name, set)),
    ],
  },
});
