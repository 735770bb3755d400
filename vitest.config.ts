import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // Tests start real redis-server processes and HTTP servers; give slow CI machines room.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // dist/ is built once here, never by a test file while others read it.
    globalSetup: ["test/global-setup.ts"],
    projects: [
      // test/http serves the provider with `provider.listen()`: its routes straight from node:http.
      { extends: true, test: { name: "all", include: ["test/**/*.test.ts", "examples/**/*.test.ts"] } },
      // ... and the same suite again through the Express app (`http.createServer(provider)`, what
      // mounting it does): both ways must give the same answers (test/http/helpers.ts reads this).
      {
        extends: true,
        test: {
          name: "http via express",
          include: ["test/http/**/*.test.ts"],
          exclude: ["test/http/same-bytes.test.ts"], // serves both ways itself
          env: { PROVIDER_KIT_TEST_SERVING: "express" },
        },
      },
    ],
  },
});
