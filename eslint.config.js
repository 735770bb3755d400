// Correctness, not formatting: ESLint's and typescript-eslint's recommended rules with type
// information, so that `any` cannot leak in unnoticed and promises are not dropped.
import eslint from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

/** A relative path into a workspace package's files, from another package. */
const INTO_ANOTHER_PACKAGE = {
  regex: "^(\\.\\./)+(packages/)?(provider-kit|redis-store|conformance|platform)/(src|dist)(/|$)",
  message: "Import another package by its name or a subpath its package.json exports (provider-kit/contract, @provider-kit/redis-store...), not its files.",
};
/** A relative path into a package's files from the example, the bench or the repository's tests. */
const INTO_A_PACKAGE = {
  regex: "^(\\.\\./)+(src|dist)(/|$)",
  message: "Outside a package, import it by its name or a subpath its package.json exports, not its files.",
};

export default defineConfig(
  // The template is a project of its own (type-checked by its project.test.ts);
  // the console's static files are browser scripts, not part of the TypeScript program.
  {
    ignores: ["**/dist/", "packages/provider-kit/templates/", "packages/platform/src/platform/console/static/", "**/*.js", "**/*.cjs"],
  },
  {
    files: ["**/*.ts"],
    extends: [eslint.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      // Handlers, stores and test doubles are async to fit a promise-returning signature, with or
      // without an await inside.
      "@typescript-eslint/require-await": "off",
      // Interfaces here declare plain function members with method syntax, and the objects that
      // hold them never use `this`: taking such a member off its object is fine.
      "@typescript-eslint/unbound-method": "off",
      // Passing on a caught error, typed unknown (or any, as AbortSignal's reason), is fine, as
      // only-throw-error allows for a throw; a rejection with a literal still fails.
      "@typescript-eslint/prefer-promise-reject-errors": ["error", { allowThrowingAny: true, allowThrowingUnknown: true }],
      // Express tells error handlers by their four parameters; a rest pattern leaves keys out.
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", ignoreRestSiblings: true }],
      // One package uses another through its public exports (its name, or a subpath of its
      // package.json's exports), never a path into its files: a relative path into another
      // package's src/ or dist/ (from a package, the example, the bench or the repository's tests).
      // Test helpers (test/...) may be shared across the workspace's tests.
      "no-restricted-imports": ["error", { patterns: [INTO_ANOTHER_PACKAGE, INTO_A_PACKAGE] }],
    },
  },
  {
    // Inside a package, its own tests and sources reach its src/ by relative paths.
    files: ["packages/*/test/**/*.ts", "packages/*/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { patterns: [INTO_ANOTHER_PACKAGE] }],
    },
  },
  {
    // vitest types its asymmetric matchers (expect.any, expect.stringMatching...) as `any`; an
    // `any` used in a test still fails the other no-unsafe-* rules.
    files: ["test/**/*.ts", "packages/*/test/**/*.ts", "examples/*/test/**/*.ts"],
    rules: { "@typescript-eslint/no-unsafe-assignment": "off" },
  },
);
