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

/** Compiles the bench servers (and the example) into `.tmp/bench-build`; throws with tsc's output on failure. */
export function compileServers(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", config], { cwd: projectRoot, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string };
    throw new Error(`Compiling the benchmark servers failed (tsc -p bench/tsconfig.servers.json):\n${output.stdout ?? ""}${output.stderr ?? ""}`, {
      cause: error,
    });
  }
}

/** `bench/servers/provider.ts` → its compiled `.js` under the build directory. */
export function compiledEntry(sourceEntry: string): string {
  return join(buildDir, relative(projectRoot, sourceEntry)).replace(/\.ts$/, ".js");
}
