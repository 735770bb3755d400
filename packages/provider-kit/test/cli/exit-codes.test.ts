/**
 * Every `provider-kit` command exits with the same codes (src/cli/exit-codes.ts) and lists them
 * in its --help: one process per command line, so in the slow set, one test each. (Colour:
 * color.test.ts.)
 */
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

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

describe("provider-kit exit codes", () => {
  it.each([["provider-kit", []], ["check", ["check"]], ["init", ["init"]], ["manifest", ["manifest"]], ["platform", ["platform"]], ["dev", ["dev"]]])(
    "%s --help lists them",
    async (_, command) => {
    const { code, stdout } = await run([...command, "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("Exit codes:");
    expect(stdout).toContain("2        bad usage or a start-up error");
    },
  );

  const noProject = (dir: string) => `No package.json in ${dir}: run this in a project made by \`provider-kit init\``;

  it("manifest exits 2 outside a project, saying what to change", async () => {
    const manifest = await run(["manifest", "--dir", scratch]);
    expect([manifest.code, manifest.stderr]).toEqual([2, expect.stringContaining(noProject(scratch))]);
  });

  it("init exits 2 when its path is a file, saying what to change", async () => {
    const taken = path.join(scratch, "taken");
    await writeFile(taken, "a file, not a directory");
    const init = await run(["init", taken]);
    expect([init.code, init.stderr]).toEqual([2, expect.stringContaining("exists and is not a directory: choose another path")]);
  });

  it("platform exits 2 without its admin, saying what to set", async () => {
    const platform = await run(["platform", "--port", "0"]);
    expect([platform.code, platform.stderr]).toEqual([2, expect.stringContaining("set PLATFORM_ADMIN_EMAIL and PLATFORM_ADMIN_PASSWORD")]);
  });

  it("dev exits 2 outside a project, and in one without a service id, saying what to change", async () => {
    const dev = await run(["dev", "--dir", scratch]);
    expect([dev.code, dev.stderr]).toEqual([2, expect.stringContaining(noProject(scratch))]);
    const project = path.join(scratch, "project");
    await mkdir(project, { recursive: true });
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "p", scripts: { start: "node main.js" } }));
    const noServiceId = await run(["dev", "--dir", project]);
    expect([noServiceId.code, noServiceId.stderr]).toEqual([2, expect.stringContaining('has no valid providerKit.serviceId: add "providerKit": {"serviceId": "my-service"}')]);
  });

  it("dev exits 2 when its port is taken, saying what to pass", async () => {
    const project = path.join(scratch, "project-with-id");
    await mkdir(project, { recursive: true });
    await writeFile(path.join(project, "package.json"), JSON.stringify({ name: "p", providerKit: { serviceId: "p" }, scripts: { start: "node main.js" } }));
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, "127.0.0.1", listening));
    try {
      const portTaken = await run(["dev", "--dir", project, "--port", String((busy.address() as AddressInfo).port)]);
      expect([portTaken.code, portTaken.stderr]).toEqual([2, expect.stringContaining("Pass --port <n> for another port")]);
    } finally {
      busy.close();
    }
  });

  it("exits 2 on an unknown command", async () => {
    expect((await run(["chek"])).code).toBe(2);
  });
});
