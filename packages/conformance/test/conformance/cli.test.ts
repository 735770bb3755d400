/**
 * `provider-kit check` as a real process against providers on loopback: exit codes, the report
 * formats and files, and the cleanup when it is interrupted.
 */
import { spawn } from "node:child_process";
import express from "express";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ConformanceReport } from "../../src/conformance/index.js";
import { CREDENTIALS, PROVISION_MS, serving, statusOf } from "./helpers.js";
import { BROKER_CREDENTIALS, osbBroker } from "./osb-broker.js";
import { listen, referenceProvider } from "./reference-provider.js";
import { parseXmlElements } from "./xml.js";
import { PROVIDER_PASSWORD, startRedisExample } from "../../../../test/support/redis-example.js";

const ROOT = fileURLToPath(new URL("../../../..", import.meta.url));
const LOGIN = ["--username", CREDENTIALS.username, "--password", CREDENTIALS.password];

interface Cli {
  /** Resolves when the process exits. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
  stderr: () => string;
  signal: (name: NodeJS.Signals) => void;
}

/** The CLI from source, in one process (so a signal reaches it directly), without the caller's PROVIDER_KIT_* settings. */
function cli(args: string[], extraEnv: Record<string, string> = {}): Cli {
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^(VITEST|PROVIDER_KIT_|NODE_OPTIONS$|NO_COLOR$|FORCE_COLOR$)/.test(key))),
    ...extraEnv,
  };
  const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", ...args], { cwd: ROOT, env });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on("close", (code) => resolve({ code, stdout, stderr })),
  );
  return { done, stderr: () => stderr, signal: (name) => child.kill(name) };
}

const check = (args: string[], env?: Record<string, string>) => cli(["check", ...args], env).done;

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(path.join(tmpdir(), "pkc-cli-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

describe("provider-kit check --actions", { timeout: 120_000 }, () => {
  it("checks each operation the provider's own module declares, and says what is wrong with the module", async () => {
    const example = await startRedisExample();
    try {
      const login = ["--username", "redis", "--password", PROVIDER_PASSWORD];
      const { code, stdout } = await check(["--url", example.url, ...login, "--actions", "examples/redis/actions.ts", "--format", "json"]);
      const report = JSON.parse(stdout) as ConformanceReport;
      const actions = report.results.filter((result) => result.id.startsWith("actions."));
      expect(actions.map((result) => [result.id, result.outcome])).toEqual([
        ["actions.exists", "pass"],
        ["actions.auth", "pass"],
        ["actions.no-405", "pass"],
        ["actions.bad-input", "pass"],
      ]);
      expect(JSON.stringify(actions)).toContain("/flush");
      expect(code).toBe(0);

      const wrong = await check(["--url", example.url, ...login, "--actions", "examples/redis/actions.ts", "--export", "nothing"]);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain('has no export "nothing" made by declareActions(...)');
      const both = await check(["--url", example.url, ...login, "--actions", "examples/redis/actions.ts", "--manifest", "x.json"]);
      expect([both.code, both.stderr]).toEqual([2, expect.stringContaining("--manifest and --actions both give the operations to check: give one.")]);
    } finally {
      await example.stop();
    }
  });
});

describe("provider-kit check", () => {
  it("exits 0 and prints the tree when every MUST check passes", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: PROVISION_MS }), async ({ url }) => {
      const { code, stdout } = await check(["--url", url, ...LOGIN]);
      expect(stdout).toMatch(/PASSED: \d+ passed, 0 failed/);
      expect(stdout).toContain("✓ pass  MUST   bind-app.provisioning");
      expect(code).toBe(0);
    });
  });

  it("stops at once with exit 2 when the provider refuses the credentials, saying which to pass", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: PROVISION_MS }), async ({ url }) => {
      const { code, stdout, stderr } = await check(["--url", url, "--username", CREDENTIALS.username, "--password", "not-its-password"]);
      expect(code).toBe(2);
      expect(stderr).toContain("refused the credentials given (401 to its first two calls): pass the username and password the provider was started with");
      expect(stdout).toBe("");
    });
  });

  it("colours the tree into a pipe only with FORCE_COLOR, and never with NO_COLOR alone", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: PROVISION_MS }), async ({ url }) => {
      const forced = await check(["--url", url, ...LOGIN, "--groups", "plans"], { FORCE_COLOR: "1" });
      expect(forced.stdout).toContain("\u001b[32m✓ pass\u001b[0m");
      const plain = await check(["--url", url, ...LOGIN, "--groups", "plans"], { NO_COLOR: "1" });
      expect(plain.stdout).toContain("✓ pass");
      expect(plain.stdout).not.toContain("\u001b[");
    });
  });

  it("exits 1 against a broken provider, and writes a well-formed JUnit file while the tree goes to the terminal", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "numeric-env" }), async ({ url }) => {
      const file = path.join(scratch, "conformance.xml");
      const { code, stdout, stderr } = await check(["--url", url, ...LOGIN, "--format", "junit", "--output", file]);
      expect(code).toBe(1);
      expect(stdout).toContain("✗ FAIL  MUST   bind-app.env-strings");
      expect(stderr).toContain(`Report written to ${file}`);
      const xml = await readFile(file, "utf8");
      const elements = parseXmlElements(xml);
      expect(elements.filter((name) => name === "failure")).toHaveLength(1);
      expect(xml).toContain('<testcase name="bind-app.env-strings [MUST]"');
    });
  });

  it("exits 2 when the report file cannot be written, after printing the tree", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const file = path.join(scratch, "no-such-dir", "report.xml");
      const { code, stdout, stderr } = await check(["--url", url, ...LOGIN, "--groups", "create", "--format", "junit", "--output", file]);
      expect(stdout).toMatch(/PASSED: 4 passed/);
      expect(stderr).toContain(`error: cannot write the report to ${file}: ENOENT`);
      expect(code).toBe(2);
    });
  });

  it("shows every exchange of a failure with --verbose, the first one without", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "no-auth" }), async ({ url }) => {
      const brief = await check(["--url", url, ...LOGIN, "--groups", "auth"]);
      const verbose = await check(["--url", url, ...LOGIN, "--groups", "auth", "--verbose"]);
      expect(brief.stdout).toContain("(2 more exchanges: --verbose shows them)");
      expect(brief.stdout).toContain("follows from auth.no-credentials (--verbose shows the evidence)");
      // auth.no-credentials and auth.wrong-password, three probes each.
      expect(verbose.stdout.match(/^ +received: /gm)).toHaveLength(6);
      expect([brief.code, verbose.code]).toEqual([1, 1]);
    });
  });

  it("prints the JSON report with --format json, for the variant and encoding asked", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const { code, stdout } = await check(["--url", url, ...LOGIN, "--format", "json", "--variant", "A", "--encoding", "json", "--groups", "create,destroy"]);
      const report = JSON.parse(stdout) as ConformanceReport;
      expect(report).toMatchObject({ variant: "A", encoding: "json", passed: true });
      expect(report.results.map((result) => result.id)).toEqual(["create.status", "create.fresh-name", "create.duplicate", "create.unknown-plan", "destroy.status"]);
      expect(code).toBe(0);
    });
  });

  it("refuses a --plan the provider does not list with the plans it lists, and exits 2 having created nothing", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const { code, stdout, stderr } = await check(["--url", url, ...LOGIN, "--plan", "shared"]);
      expect([code, stdout]).toEqual([2, ""]);
      expect(stderr).toContain('error: The plan "shared" is not one the provider lists (small, large): pass one of those as --plan');
      expect(stderr).not.toContain("destroying");
    });
  });

  it("waits --request-timeout seconds for each answer: a provider slower than that is unanswered, one within it passes", async () => {
    const slow = express().use((_req, _res, next) => void setTimeout(next, 1_500)).use(referenceProvider(CREDENTIALS));
    await serving(slow, async ({ url }) => {
      const cut = await check(["--url", url, ...LOGIN, "--groups", "plans", "--request-timeout", "0.5"]);
      expect([cut.code, cut.stderr]).toEqual([2, expect.stringContaining("no answer within 500 ms")]);
      const waited = await check(["--url", url, ...LOGIN, "--groups", "plans", "--request-timeout", "20"]);
      expect([waited.code, waited.stderr]).toEqual([0, ""]);
    });
  });

  it("with --multi-cluster asks the plans of each --pool, with the pool's headers, in the order given", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const pools = ["--pool", "gpu", "--pool", "cpu-2"];
      const { code, stdout } = await check(["--url", url, ...LOGIN, "--multi-cluster", ...pools, "--groups", "pools", "--format", "json"]);
      const report = JSON.parse(stdout) as ConformanceReport;
      const perPool = report.results.find((result) => result.id === "pools.plans");
      expect(perPool).toMatchObject({ outcome: "pass", detail: "gpu: small, large; cpu-2: small, large" });
      expect(perPool?.exchanges.map((exchange) => exchange.requestHeaders["X-Tsuru-Pool-Name"])).toEqual(["gpu", "cpu-2"]);
      expect(code).toBe(0);
    });
  });

  it("without --multi-cluster skips the pools checks of a provider whose plans need no pool, saying how to ask", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const { code, stdout } = await check(["--url", url, ...LOGIN, "--pool", "gpu", "--groups", "pools"]);
      expect(stdout).toContain("- skip  MUST   pools.pool-read");
      expect(stdout).toContain("pass --multi-cluster (multiCluster: true) to ask its plans per pool all the same");
      expect(code).toBe(0);
    });
  });

  it("takes the password from PROVIDER_KIT_PASSWORD too", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const env = { ...process.env, PROVIDER_KIT_PASSWORD: CREDENTIALS.password };
      const child = spawn(process.execPath, ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "check", "--url", url, "--username", CREDENTIALS.username, "--groups", "auth"], { cwd: ROOT, env, stdio: "ignore" });
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect(code).toBe(0);
    });
  });

  it("exits 2 with a clear message when the provider cannot be reached", async () => {
    // A port that was just free: nothing listens on it any more.
    const closed = await listen(referenceProvider(CREDENTIALS));
    await closed.close();
    const { code, stderr } = await check(["--url", closed.url, ...LOGIN]);
    expect(stderr).toContain(`error: Cannot reach the provider at ${closed.url}: connect ECONNREFUSED`);
    expect(code).toBe(2);
  });

  it.each([
    ["--url, --username and --password (or PROVIDER_KIT_PASSWORD) are required", ["--url", "http://127.0.0.1:1", "--username", "u"]],
    ["argument 'C' is invalid. Allowed choices are A, B, current.", ["--url", "http://127.0.0.1:1", ...LOGIN, "--variant", "C"]],
    ["unknown group bogus", ["--url", "http://127.0.0.1:1", ...LOGIN, "--groups", "auth,bogus"]],
    ["give a positive number of seconds.", ["--url", "http://127.0.0.1:1", ...LOGIN, "--timeout", "soon"]],
    ["give comma-separated seconds, each 0 or more", ["--url", "http://127.0.0.1:1", ...LOGIN, "--cleanup-retries", "1,soon"]],
    ['"not a url" is not a URL', ["--url", "not a url", ...LOGIN]],
    ["unknown option '--frobnicate'", ["--url", "http://127.0.0.1:1", ...LOGIN, "--frobnicate"]],
    ['Pool name "Pool_A" is not one the platform accepts', ["--url", "http://127.0.0.1:1", ...LOGIN, "--multi-cluster", "--pool", "Pool_A"]],
  ])("exits 2 on bad usage: %s", async (message, args) => {
    const { code, stderr } = await check(args);
    expect(stderr).toContain(message);
    expect(code).toBe(2);
  });

  it("takes a bare host:port as an http:// URL", async () => {
    await serving(referenceProvider(CREDENTIALS), async ({ url }) => {
      const hostPort = url.replace(/^http:\/\//, "");
      expect(hostPort).toMatch(/^127\.0\.0\.1:\d+$/);
      const { code, stdout } = await check(["--url", hostPort, ...LOGIN, "--groups", "create"]);
      expect(stdout).toContain(`Conformance of http://${hostPort}`);
      expect(stdout).toMatch(/PASSED: \d+ passed, 0 failed/);
      expect(code).toBe(0);
    });
  });

  it("retries a failed cleanup on the --cleanup-retries schedule, then names the instance with the destroy's answer", async () => {
    const destroys: string[] = [];
    const counted = express();
    counted.use((req, _res, next) => {
      if (req.method === "DELETE" && /^\/resources\/[^/]+$/.test(req.path) && !req.path.includes("pkc-missing-")) destroys.push(req.path);
      next();
    });
    counted.use(referenceProvider({ ...CREDENTIALS, fault: "destroy-500" }));
    await serving(counted, async ({ url }) => {
      const { code, stdout, stderr } = await check(["--url", url, ...LOGIN, "--groups", "destroy", "--cleanup-retries", "0,0.01"]);
      const instance = /instance (pkc-[0-9a-z-]+)\)/.exec(stdout)?.[1];
      const reason = `DELETE /resources/${instance} answered 500: Could not remove the instance: its disk is busy.`;
      expect(stderr).toContain(`could not remove ${instance}: ${reason}\n`);
      expect(stdout).toContain(`Could not remove ${instance} (${reason}): remove it with DELETE /resources/${instance}, or by hand.`);
      // The run's own destroy, then the cleanup's first attempt and its two retries.
      expect(destroys).toEqual(Array(4).fill(`/resources/${instance}`));
      // Each attempt and each wait is a line: a slow destroy is never silence.
      const destroyLines = stderr.split("\n").filter((line) => line.includes(`destroy`) && line.includes(instance!));
      expect(destroyLines).toEqual([
        `destroying ${instance}...`,
        `destroying ${instance} (cleanup, attempt 1 of 3)...`,
        `could not destroy ${instance} yet (${reason}): trying again in 0 s`,
        `destroying ${instance} (cleanup, attempt 2 of 3)...`,
        `could not destroy ${instance} yet (${reason}): trying again in 0.01 s`,
        `destroying ${instance} (cleanup, attempt 3 of 3)...`,
      ]);
      expect(code).toBe(1);
    });
  });

  it("keeps the destroys' progress lines for a reader: none beside a JSON report", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "destroy-500" }), async ({ url }) => {
      const { stdout, stderr } = await check(["--url", url, ...LOGIN, "--groups", "destroy", "--cleanup-retries", "0", "--format", "json"]);
      const report = JSON.parse(stdout) as ConformanceReport;
      expect(report.leftovers.map((leftover) => leftover.instance)).toContain(report.instance);
      expect(stderr).not.toContain("destroying");
      expect(stderr).not.toContain("trying again");
      expect(stderr).toContain(`could not remove ${report.instance}`);
    });
  });

  it("lists the checks as the table of docs/conformance-checks.md", async () => {
    const { code, stdout } = await check(["--list-checks"]);
    expect(code).toBe(0);
    expect(await readFile(path.join(ROOT, "docs/conformance-checks.md"), "utf8")).toContain(stdout);
  });

  it("on SIGINT while waiting for provisioning, removes the instance, then exits 130", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 120_000 }), async ({ url }) => {
      const run = cli(["check", "--url", url, ...LOGIN]);
      // Wait (polling, generous limit) until the CLI reports it is waiting on the instance.
      for (let waited = 0; !run.stderr().includes("waiting for") && waited < 25_000; waited += 100) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const instance = /waiting for (pkc-[0-9a-f]+-conformance)/.exec(run.stderr())?.[1];
      expect(instance).toBeDefined();
      expect(await statusOf(url, instance!)).toBe(202);
      run.signal("SIGINT");
      const { code, stdout, stderr } = await run.done;
      expect(stderr).toContain(`removed ${instance}`);
      expect(stdout).toMatch(/INTERRUPTED: /);
      expect(code).toBe(130);
      expect(await statusOf(url, instance!)).toBe(404);
    });
  });
});

describe("provider-kit check --osb", { timeout: 120_000 }, () => {
  const brokerLogin = ["--username", BROKER_CREDENTIALS.username, "--password", BROKER_CREDENTIALS.password];

  it("exits 0 on a broker that keeps every rule and 1 on one that breaks a MUST, in every report format", async () => {
    await serving(osbBroker(), async (broker) => {
      const { code, stdout } = await check(["--osb", "--url", broker.url, ...brokerLogin, "--format", "json"]);
      expect(code).toBe(0);
      expect(JSON.parse(stdout)).toMatchObject({ protocol: "osb", passed: true });
    });
    await serving(osbBroker("conflict-accepted"), async (broker) => {
      const { code, stdout } = await check(["--osb", "--url", broker.url, ...brokerLogin, "--format", "junit", "--groups", "osb-provision"]);
      expect(code).toBe(1);
      expect(stdout).toContain('<testcase name="osb-provision.conflict [MUST]"');
      expect(stdout).not.toContain("osb-binding");
    });
  });

  it("exits 2 for the native check's options, native groups, an unreachable broker or refused credentials", async () => {
    await serving(osbBroker(), async (broker) => {
      const plan = await check(["--osb", "--url", broker.url, ...brokerLogin, "--plan", "small"]);
      expect(plan).toMatchObject({ code: 2, stderr: expect.stringContaining("--plan applies to the native check only") });
      const groups = await check(["--osb", "--url", broker.url, ...brokerLogin, "--groups", "create"]);
      expect(groups).toMatchObject({ code: 2, stderr: expect.stringContaining("with --osb the groups are osb-auth") });
      const refused = await check(["--osb", "--url", broker.url, "--username", "pkc-broker", "--password", "wrong"]);
      expect(refused).toMatchObject({ code: 2, stderr: expect.stringContaining("refused the credentials") });
    });
    const native = await check(["--url", "http://127.0.0.1:9", ...brokerLogin, "--groups", "osb-catalog"]);
    expect(native).toMatchObject({ code: 2, stderr: expect.stringContaining("add --osb") });
    // A port just freed: nothing listens there.
    const closed = await listen(express());
    await closed.close();
    const gone = await check(["--osb", "--url", closed.url, ...brokerLogin]);
    expect(gone).toMatchObject({ code: 2, stderr: expect.stringContaining("ECONNREFUSED") });
  });
});
