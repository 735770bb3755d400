/**
 * The servers run as compiled JavaScript, as a provider ships (`npm run build`), not through
 * tsx: tsx wraps every function created at run time in a naming helper, a per-request cost the
 * framework's closures would pay and Express's (plain JavaScript) would not.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const projectRoot = fileURLToPath(new URL("..", import.meta.url));
const config = fileURLToPath(new URL("./tsconfig.servers.json", import.meta.url));
/** Inside the project, so the compiled servers resolve the project's node_modules. */
const buildDir = join(projectRoot, ".tmp", "bench-build");

/**
 * The packages the compiled servers import, in build order: they run their `dist/` (the "import"
 * export condition), so a bench of the sources as they are needs them built first.
 */
const PACKAGES = ["packages/provider-kit", "packages/redis-store"];

function tsc(project: string, what: string): void {
  const compiler = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  try {
    execFileSync(process.execPath, [compiler, "-p", project], { cwd: projectRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string };
    throw new Error(`Compiling ${what} failed (tsc -p ${relative(projectRoot, project)}):\n${output.stdout ?? ""}${output.stderr ?? ""}`, {
      cause: error,
    });
  }
}

/**
 * Builds the framework's packages (their `dist/`), then compiles the bench servers (and the
 * example) into `.tmp/bench-build`; throws with tsc's output on failure.
 */
export function compileServers(): void {
  for (const dir of PACKAGES) tsc(join(projectRoot, dir, "tsconfig.build.json"), dir);
  tsc(config, "the benchmark servers");
}

/** `bench/servers/provider.ts` → its compiled `.js` under the build directory. */
export function compiledEntry(sourceEntry: string): string {
  return join(buildDir, relative(projectRoot, sourceEntry)).replace(/\.ts$/, ".js");
}
