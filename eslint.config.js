// Correctness, not formatting: ESLint's and typescript-eslint's recommended rules with type
// information, so that `any` cannot leak in unnoticed and promises are not dropped.
import eslint from "@eslint/js";
import { defineConfig } from "eslint/config";
import tseslint from "typescript-eslint";

export default defineConfig(
  // The template is a project of its own (type-checked by test/template/project.test.ts);
  // the console's static files are browser scripts, not part of the TypeScript program.
  { ignores: ["dist/", "templates/", "src/platform/console/static/", "**/*.js", "**/*.cjs"] },
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
    },
  },
  {
    // vitest types its asymmetric matchers (expect.any, expect.stringMatching...) as `any`; an
    // `any` used in a test still fails the other no-unsafe-* rules.
    files: ["test/**/*.ts", "examples/*/test/**/*.ts"],
    rules: { "@typescript-eslint/no-unsafe-assignment": "off" },
  },
);
