// provider-kit is ESM only. package.json sends require("provider-kit") (and its subpaths) here,
// so that CommonJS callers learn what to do instead of getting ERR_PACKAGE_PATH_NOT_EXPORTED.
const error = new Error(
  "provider-kit is an ES module package (ESM only): it cannot be loaded with require(). " +
    'Use import { createProvider } from "provider-kit" in an ES module (a .mjs file, or "type": "module" in your package.json), ' +
    'or from CommonJS: const { createProvider } = await import("provider-kit").',
);
error.code = "ERR_REQUIRE_ESM";
throw error;
