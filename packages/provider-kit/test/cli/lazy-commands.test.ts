/**
 * `provider-kit` loads a command's package only when that command runs (or its help is asked
 * for), so `--version`, `init` and `manifest` start without the conformance kit and the platform;
 * `--help` lists those commands as their packages describe them all the same.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
/** Prints every module URL Node loads (not only resolves), one per line on stderr, prefixed "loaded ". */
const TRACE = `data:text/javascript,${encodeURIComponent(`
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(
  "export async function load(url, c, next) { process.stderr.write('loaded ' + url + '\\\\n'); return next(url, c); }"
));
`)}`;

function run(args: string[]): Promise<{ code: number | null; stdout: string; loaded: string[] }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|PROVIDER_|PLATFORM_|NODE_OPTIONS$)/.test(key)));
  const main = path.join(ROOT, "packages/provider-kit/src/cli/main.ts");
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "--import", TRACE, main, ...args], { cwd: ROOT, env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, loaded: stderr.split("\n").filter((line) => line.startsWith("loaded ")) })),
  );
}

const fromPackage = (loaded: string[], dir: string) => loaded.filter((line) => line.includes(`/packages/${dir}/`));

/** The description a command list gives a command: its text after the name, joined across wrapped lines. */
function listed(help: string, command: string): string {
  const lines = help.split("\n");
  const start = lines.findIndex((line) => line.startsWith(`  ${command} `));
  const entry = [lines[start]!.replace(/^ {2}\S+( \[options\])?/, "")];
  for (const line of lines.slice(start + 1)) {
    if (!/^ {20,}\S/.test(line)) break;
    entry.push(line);
  }
  return entry.map((part) => part.trim()).join(" ");
}

describe("provider-kit loads a command's package when it runs", () => {
  it("starts --version, init and --help without the conformance kit or the platform", async () => {
    for (const args of [["--version"], ["init", "--help"], ["--help"]]) {
      const { code, loaded } = await run(args);
      expect(code).toBe(0);
      expect(loaded.length).toBeGreaterThan(0); // the trace works
      expect([args, fromPackage(loaded, "conformance"), fromPackage(loaded, "platform")]).toEqual([args, [], []]);
    }
  });

  it("loads only the command's own package to explain it, and lists it in --help as that help describes it", async () => {
    const { stdout: help } = await run(["--help"]);
    for (const [args, option, own, other] of [
      [["check", "--help"], "--osb", "conformance", "platform"],
      [["platform", "--help"], "--seed", "platform", "conformance"],
      [["help", "dev"], "--dir", "platform", "conformance"],
    ] as const) {
      const { stdout, loaded } = await run([...args]);
      expect(stdout).toContain(option);
      expect([args, fromPackage(loaded, own).length > 0, fromPackage(loaded, other)]).toEqual([args, true, []]);
      const command = args[0] === "help" ? args[1] : args[0];
      expect(help).toContain(`  ${command} [options] `);
      expect(listed(help, command)).toBe(stdout.split("\n\n")[1]!.replace(/\s+/g, " ").trim());
    }
  });
});
