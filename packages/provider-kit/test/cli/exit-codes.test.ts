/**
 * Every `provider-kit` command exits with the same codes (src/cli/exit-codes.ts) and lists them
 * in its --help; colour follows FORCE_COLOR, then NO_COLOR, then the terminal.
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { colorOn } from "../../src/cli/color.js";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|PROVIDER_|PLATFORM_|NODE_OPTIONS$)/.test(key)));
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", path.join(ROOT, "packages/provider-kit/src/cli/main.ts"), ...args], { cwd: ROOT, env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, stdout, stderr })));
}

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "pk-exit-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("provider-kit exit codes", { timeout: 60_000 }, () => {
  it.each([["provider-kit", []], ["check", ["check"]], ["init", ["init"]], ["manifest", ["manifest"]], ["platform", ["platform"]], ["dev", ["dev"]]])(
    "%s --help lists them",
    async (_, command) => {
    const { code, stdout } = await run([...command, "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Exit codes:");
    expect(stdout).toContain("2        bad usage or a start-up error");
    },
  );

  it("exits 2 when a command cannot start, whichever it is, saying what to change", async () => {
    const manifest = await run(["manifest", "--dir", scratch]);
    expect([manifest.code, manifest.stderr]).toEqual([2, expect.stringContaining("No package.json in " + scratch + ": run this in a project made by `provider-kit init`")]);

    const taken = path.join(scratch, "taken");
    await rm(taken, { recursive: true, force: true });
    await writeFile(taken, "a file, not a directory");
    const init = await run(["init", taken]);
    expect([init.code, init.stderr]).toEqual([2, expect.stringContaining("exists and is not a directory: choose another path")]);

    const platform = await run(["platform", "--port", "0"]);
    expect([platform.code, platform.stderr]).toEqual([2, expect.stringContaining("set PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD")]);

    const dev = await run(["dev", "--dir", scratch]);
    expect([dev.code, dev.stderr]).toEqual([2, expect.stringContaining("No package.json in " + scratch + ": run this in a project made by `provider-kit init`")]);
    const project = path.join(scratch, "project");
    await mkdir(project, { recursive: true });
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "p", scripts: { start: "node main.js" } }));
    const noServiceId = await run(["dev", "--dir", project]);
    expect([noServiceId.code, noServiceId.stderr]).toEqual([2, expect.stringContaining('has no valid providerKit.serviceId: add "providerKit": {"serviceId": "my-service"}')]);
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "p", providerKit: { serviceId: "p" }, scripts: { start: "node main.js" } }));
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, "127.0.0.1", listening));
    try {
      const portTaken = await run(["dev", "--dir", project, "--port", String((busy.address() as AddressInfo).port)]);
      expect([portTaken.code, portTaken.stderr]).toEqual([2, expect.stringContaining("Pass --port <n> for another port")]);
    } finally {
      busy.close();
    }

    const unknown = await run(["chek"]);
    expect(unknown.code).toBe(2);
  });
});

describe("colorOn", () => {
  const terminal = { isTTY: true, hasColors: () => true };
  const pipe = { isTTY: false };
  type Case = [string, Parameters<typeof colorOn>[0], NodeJS.ProcessEnv, boolean];
  it.each<Case>([
    ["a terminal", terminal, {}, true],
    ["a pipe", pipe, {}, false],
    ["a terminal with NO_COLOR=1", terminal, { NO_COLOR: "1" }, false],
    ["a terminal with NO_COLOR empty (unset, per no-color.org)", terminal, { NO_COLOR: "" }, true],
    ["a pipe with FORCE_COLOR=1", pipe, { FORCE_COLOR: "1" }, true],
    ["a pipe with FORCE_COLOR empty", pipe, { FORCE_COLOR: "" }, true],
    ["a terminal with FORCE_COLOR=0", terminal, { FORCE_COLOR: "0" }, false],
    ["FORCE_COLOR=1 and NO_COLOR=1 (FORCE_COLOR wins, as in Node)", pipe, { FORCE_COLOR: "1", NO_COLOR: "1" }, true],
    ["a dumb terminal", { isTTY: true, hasColors: () => false }, {}, false],
  ])("%s", (_, stream, env, expected) => {
    expect(colorOn(stream, env)).toBe(expected);
  });
});
