/**
 * What the local platform trusts, attacked over real HTTP: host names it does not answer for
 * (DNS rebinding), state changes from other origins' pages, sign-up, who may `run`, and where the
 * admin's credentials go.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { once } from "node:events";
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UNPRINTED } from "../../../../test/support/unprinted.js";
import { stringify } from "yaml";
import { eventually } from "../../../../test/support/eventually.js";
import { startRedisServer } from "../../../../test/support/redis-server.js";
import { startLongRunning } from "../../../../test/support/processes.js";
import { removeDir, startPlatformProcess } from "../../../../test/support/redis-example.js";
import { ADMIN, Api, manifest, startTestPlatform, startTestProvider, type TestPlatform, type TestProvider } from "./helpers.js";

interface RawAnswer {
  status: number;
  text: string;
}

/** A request with headers fetch would not let us set (Host). */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const portOf = (url: string) => new URL(url).port;

describe("the host names the platform answers for", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform("memory", { allowedHosts: ["dev.example.test"], openSignup: true });
  });
  afterAll(() => t.stop());

  it("answers its own names with its port, and names given with --allowed-host", async () => {
    const port = portOf(t.url);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `dev.example.test:${port}`]) {
      expect((await raw(t.url, "GET", "/info", { Host: host })).status, host).toBe(200);
    }
  });

  it("refuses any other name, or its own names with another port, before reading anything (DNS rebinding)", async () => {
    const port = portOf(t.url);
    for (const host of [`attacker.test:${port}`, `127.0.0.1.attacker.test:${port}`, `0.0.0.0:${port}`, `localhost:${Number(port) + 1}`, "localhost", "attacker.test"]) {
      const answer = await raw(t.url, "POST", "/users", { Host: host, "Content-Type": "application/json" }, JSON.stringify({ email: "rebound@example.com", password: "secret-1" }));
      expect(answer.status, host).toBe(403);
      expect(answer.text).toMatch(/does not answer for the host name .*--allowed-host/);
    }
    expect((await new Api(t.url).post("/users/rebound@example.com/tokens", { json: { password: "secret-1" } })).status).toBe(401);
  });

  it("refuses a state change from another origin's page, and takes its own origin's or none", async () => {
    const signUp = (email: string, headers: Record<string, string>) =>
      t.anonymous.post("/users", { json: { email, password: "secret-1" }, headers });
    for (const origin of ["http://attacker.test", `http://127.0.0.1:${Number(portOf(t.url)) + 1}`, "null", `https://127.0.0.1:${portOf(t.url)}`]) {
      const answer = await signUp("cross@example.com", { Origin: origin });
      expect(answer.status, origin).toBe(403);
      expect(answer.text).toMatch(/only the platform's own pages may change its state/);
    }
    expect((await t.anonymous.post("/users/cross@example.com/tokens", { json: { password: "secret-1" } })).status).toBe(401);
    expect((await signUp("own@example.com", { Origin: t.url })).status).toBe(200);
    expect((await signUp("no-origin@example.com", {})).status).toBe(200);
    // Reading needs a token another origin's page does not have; the Origin alone refuses nothing.
    expect((await t.admin.send("GET", "/info", { headers: { Origin: "http://attacker.test" } })).status).toBe(200);
  });
});

describe("sign-up", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform("memory");
  });
  afterAll(() => t.stop());

  it("is closed by default: a stranger is refused, saying who creates users", async () => {
    const answer = await t.anonymous.post("/users", { json: { email: "stranger@example.com", password: "secret-1" } });
    expect(answer.status).toBe(403);
    expect(answer.text).toMatch(/Sign-up is closed .* ask its admin .*--open-signup/);
    expect((await t.anonymous.post("/users/stranger@example.com/tokens", { json: { password: "secret-1" } })).status).toBe(401);
  });

  it("lets the admin create users, and no one else", async () => {
    await t.admin.ok(t.admin.post("/users", { json: { email: "dev@example.com", password: "secret-1" } }));
    const dev = await t.anonymous.login("dev@example.com", "secret-1");
    const byUser = await dev.post("/users", { json: { email: "friend@example.com", password: "secret-1" } });
    expect(byUser.status).toBe(403);
  });
});

describe("open sign-up's e-mail check", () => {
  it("refuses a huge address by its length before any pattern reads it", async () => {
    const t = await startTestPlatform("memory", { openSignup: true });
    try {
      // 120 KB of dots: the old pattern's backtracking held the event loop for half a minute.
      const huge = await t.anonymous.post("/users", { json: { email: `a@${".".repeat(120_000)}@`, password: "secret-1" } });
      expect([huge.status, huge.text]).toEqual([400, "Invalid email: at most 254 characters."]);
      expect((await t.anonymous.post("/users", { json: { email: `a@${".".repeat(200)}@`, password: "secret-1" } })).text).toBe("Invalid email.");
      expect((await t.anonymous.post("/users", { json: { email: `a@${"b.".repeat(100)}c`, password: "secret-1" } })).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});

describe("run", () => {
  it("is off unless the platform was started with --allow-run", async () => {
    const t = await startTestPlatform("memory", { allowRun: undefined });
    try {
      await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
      await t.admin.ok(t.admin.put("/apps/web/units", { text: "1" }));
      const refused = await t.admin.post("/apps/web/run", { text: "id -un" });
      expect(refused.status).toBe(403);
      expect(refused.text).toMatch(/run is off.*--allow-run/);
    } finally {
      await t.stop();
    }
  });

  it("with --allow-run, serves only the members of the app's teams, the admin included", async () => {
    const t = await startTestPlatform("memory", { allowRun: true });
    try {
      const dev = await t.admin.user("dev@example.com");
      await dev.ok(dev.post("/teams", { json: { name: "devs" } }));
      await dev.ok(dev.post("/apps", { json: { name: "web", platform: "node", teamOwner: "devs" } }));
      await dev.ok(dev.put("/apps/web/units", { text: "1" }));
      expect((await dev.ok(dev.post("/apps/web/run?once=true", { text: "echo member" }))).text).toBe("member\n");

      const refused = await t.admin.post("/apps/web/run", { text: "echo admin" });
      expect(refused.status).toBe(403);
      expect(refused.text).toMatch(/Only members of the app's teams \(devs\)/);
      const outsider = await t.admin.user("outsider@example.com");
      expect([403, 404]).toContain((await outsider.post("/apps/web/run", { text: "echo outsider" })).status);
    } finally {
      await t.stop();
    }
  });
});

describe("run's bounds", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform("memory", { allowRun: true, config: { run: { timeoutMs: 1_500, outputBytes: 64 * 1024, perUser: 1 } } });
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
  });
  afterAll(() => t.stop());

  const run = (command: string) => t.admin.post("/apps/web/run?once=true", { text: command });
  /** The process group a command's first output line names (the shell's `$$`). */
  const groupOf = (output: string) => Number(output.split("\n")[0]);
  const groupGone = (group: number) =>
    eventually(() => {
      try {
        process.kill(-group, 0);
        return false;
      } catch {
        return true;
      }
    }, 10_000, `process group ${group} gone`);

  it("stops a command that ignores SIGTERM at the time limit, with all its processes", async () => {
    const answer = await run('echo $$; trap "" TERM; sleep 80');
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(/was stopped: it ran past 1.5 s/);
    await groupGone(groupOf(answer.text));
  });

  it("stops reading, and stops the command, at the output cap", async () => {
    const answer = await run('echo $$; cat /dev/zero | tr "\\0" A');
    expect(answer.status).toBe(400);
    expect(answer.text.length).toBeLessThan(64 * 1024 + 200);
    await groupGone(groupOf(answer.text));
  });

  it("answers when the shell exits, and stops what it left in the background", async () => {
    const answer = await run("echo $$; sleep 1000 & echo started");
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^\d+\nstarted\n$/);
    await groupGone(groupOf(answer.text));
  });

  it("stops what the command started in a session of its own (setsid) too", async () => {
    // The shell ends only once the background process leads its own session (/proc/<pid>/stat's 6th field).
    const answer = await run('setsid sleep 1000 & pid=$!; until [ "$(cut -d" " -f6 /proc/$pid/stat)" = "$pid" ]; do sleep 0.05; done; echo $pid');
    expect(answer.status).toBe(200);
    const escaped = Number(answer.text.trim());
    try {
      await eventually(() => {
        try {
          process.kill(escaped, 0);
          return false;
        } catch {
          return true;
        }
      }, 10_000, `the setsid process ${escaped} gone`);
    } finally {
      try {
        process.kill(escaped, "SIGKILL"); // the test's own cleanup when the platform left it
      } catch {
        // Gone, as it should be.
      }
    }
  });

  it("runs at most the configured number of commands of one user at once", async () => {
    const first = run("sleep 1; echo first");
    await eventually(async () => (await run("echo second")).status === 429, 10_000, "the second run refused while the first runs");
    const refused = await run("echo again");
    expect(refused.text).toMatch(/You already have 1 commands running \(at most 1 at once\)/);
    expect((await first).text).toBe("first\n");
    expect((await run("echo after")).text).toBe("after\n");
  });
});

describe("a provider's bind answer", () => {
  let t: TestPlatform;
  let provider: TestProvider;
  let answer: Record<string, string> = {};
  beforeAll(async () => {
    t = await startTestPlatform("memory", { allowRun: true });
    provider = await startTestProvider({ bindApp: () => answer });
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "web", platform: "node" } }));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`VAR_${i}`, "x"]));
  it.each([
    ["a TSURU_ name", { TSURU_APPNAME: "other" }, /"TSURU_APPNAME" is one of the TSURU_\* variables/],
    ["a bad name", { "MY-VAR": "x" }, /"MY-VAR" is not a variable name/],
    ["a NUL byte", { SECRET: "a\u0000b" }, /the value of "SECRET" holds a NUL byte/],
    ["a value over 64 KiB", { BIG: "x".repeat(128 * 1024 + 1) }, /the value of "BIG" is longer than 64 KiB/],
    ["10,000 variables", many, /it exports 10000 variables, more than 100/],
    ["values whose TSURU_SERVICES passes 128 KiB", { A: "x".repeat(60_000), B: "x".repeat(60_000), C: "x".repeat(60_000) }, /the app's "TSURU_SERVICES" would be 176 KiB, more than the 128 KiB the kernel passes to a process in one variable/],
  ])("is refused when it sets %s, naming it, and nothing stays bound", async (_what, exported, message) => {
    answer = exported;
    const bind = await t.admin.put("/services/instances/kv1/web");
    expect(bind.status).toBe(500);
    expect(bind.text).toMatch(/^Failed to bind the instance "kv\/kv1" to the app "web": its answer cannot be used/);
    expect(bind.text).toMatch(message);
    expect((await t.admin.get("/services/instances?app=web")).json()).toEqual([{ service: "kv", instances: [] }]);
    // Undone at the provider (setting the variables failed after bind-app succeeded); then the status for the message.
    expect(provider.handlers().slice(-2)).toEqual(["unbindApp", "status"]);
  });

  // Names a tool reads to choose a program, its options, a package source or a proxy: each with a
  // value that shows if it arrives, beside data names that must arrive.
  const steering = [
    "CC", "CXX", "MAKEFLAGS", "CFLAGS", "LDFLAGS", "RUSTFLAGS", "RUSTC_WRAPPER", "JAVA_OPTS", "MAVEN_OPTS", "GRADLE_OPTS", "SBT_OPTS",
    "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH", "ERL_AFLAGS", "ERL_FLAGS", "GOFLAGS", "GOPROXY", "CGO_CFLAGS", "CARGO_HOME",
    "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "UV_INDEX_URL", "NPM_CONFIG_REGISTRY", "npm_config_registry", "GEM_HOME", "BUNDLE_GEMFILE",
    "http_proxy", "https_proxy", "all_proxy", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "LD_PRELOAD", "LD_LIBRARY_PATH",
    "DYLD_INSERT_LIBRARIES", "GIT_SSH_COMMAND", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "SSH_AUTH_SOCK", "NODE_OPTIONS",
    "NODE_EXTRA_CA_CERTS", "PYTHONPATH", "PYTHONSTARTUP", "PYTHON_KEYRING_BACKEND", "PERL5OPT", "PERL5LIB", "RUBYOPT", "BASH_ENV", "ENV",
    "PROMPT_COMMAND", "PS4", "SHELLOPTS", "SHELL", "EDITOR", "PAGER", "BROWSER", "LESSOPEN", "PATH", "HOME", "IFS", "TMPDIR",
    "KUBECONFIG", "DOCKER_HOST", "XDG_CONFIG_HOME", "SSL_CERT_FILE", "OPENSSL_CONF", "GCONV_PATH", "LC_ALL", "LANG", "TZ",
    // Found by an attack pass: gcloud runs $CLOUDSDK_PYTHON, .NET loads a profiler, and clients of
    // clouds and secret stores send another service's token to the address they read.
    "CLOUDSDK_PYTHON", "CLOUDSDK_PYTHON_ARGS", "CROSS_COMPILE", "PYTEST_ADDOPTS", "SUDO_ASKPASS", "CORECLR_PROFILER_PATH_64",
    "CORECLR_ENABLE_PROFILING", "ANSIBLE_VAULT_PASSWORD_FILE", "AWS_ENDPOINT_URL", "VAULT_ADDR", "OPENAI_BASE_URL", "HF_ENDPOINT",
    "CONTAINER_HOST", "DBUS_SESSION_BUS_ADDRESS",
  ];
  const data = { REDIS_HOST: "10.0.0.9", REDIS_PORT: "6380", REDIS_USER: "app", REDIS_PASSWORD: "pw", DATABASE_URL: "postgres://db", REDIS_DB_INDEX: "2", username: "broker-user", password: "broker-pw", jdbcUrl: "jdbc:x" };

  it("never hands a tool's setting to a process run starts, and hands it the data names: env shows them, and make does not run CC", async () => {
    answer = { ...Object.fromEntries(steering.map((name) => [name, `from-the-provider-${name}`])), ...data };
    const bind = await t.admin.ok(t.admin.put("/services/instances/kv1/web"));
    expect(Object.keys(bind.json<Record<string, string>>()).sort()).toEqual(Object.keys(answer).sort());
    const seen = (await t.admin.ok(t.admin.post("/apps/web/run?once=true", { text: "env" }))).text;
    const variables = new Map(seen.split("\n").filter((line) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(line)).map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]));
    for (const name of steering) expect(variables.get(name), name).not.toBe(`from-the-provider-${name}`);
    for (const [name, value] of Object.entries(data)) expect(variables.get(name), name).toBe(value);
    // The platform's own PATH and HOME.
    expect(variables.get("PATH")).toBe(process.env.PATH);
    // Everything is still in TSURU_SERVICES, the app's record of its services.
    expect(JSON.parse(variables.get("TSURU_SERVICES")!)).toEqual({ kv: [{ instance_name: "kv1", envs: answer }] });
    // make with the provider's CC would run the provider's command: make runs its own default, cc.
    const makefile = "all:\\n\\t@echo compiler=$(CC)\\n";
    const made = await t.admin.ok(t.admin.post("/apps/web/run?once=true", { text: `dir=$(mktemp -d) && printf '${makefile}' > "$dir/Makefile" && make -s --no-print-directory -C "$dir"; rm -rf "$dir"` }));
    expect(made.text).toBe("compiler=cc\n");
    const log = (await t.admin.ok(t.admin.get("/apps/web/log?lines=50"))).json<Array<{ Message: string }>>().map((entry) => entry.Message);
    expect(log.find((line) => line.startsWith("bound to the instance kv1"))).toMatch(/in TSURU_SERVICES only, not in the app's processes: CC, CXX, MAKEFLAGS/);
    await t.admin.ok(t.admin.delete("/services/instances/kv1/web"));
  });

  it("refuses a user's variable that makes a tool load code", async () => {
    const set = await t.admin.post("/apps/web/env", { json: { envs: [{ name: "LD_PRELOAD", value: "/tmp/evil.so" }] } });
    expect(set.status).toBe(400);
    expect(set.text).toMatch(/Cannot set the variable: "LD_PRELOAD" is read by the loader or the shell/);
    const hook = await t.admin.post("/apps/web/env", { json: { envs: [{ name: "NODE_OPTIONS", value: "--require /tmp/evil.js" }] } });
    expect([hook.status, hook.text]).toEqual([400, expect.stringMatching(/^Cannot set the variable: "NODE_OPTIONS" makes an interpreter or tool/)]);
  });

  it("answers 400 when the app's environment keeps run from starting a process (a record from before these checks)", async () => {
    const app = (await t.platform.context.store.get("apps", "web"))!;
    const huge = { service: "kv", instance: "kv1", envs: { HUGE: "x".repeat(200 * 1024) } };
    await t.platform.context.store.put("apps", "web", { ...app, serviceEnvs: [...app.serviceEnvs, huge] });
    try {
      const answer = await t.admin.post("/apps/web/run?once=true", { text: "echo never" });
      expect([answer.status, answer.text]).toEqual([400, expect.stringMatching(/^The command could not be started: spawn E2BIG\. Check the app's environment/)]);
    } finally {
      await t.platform.context.store.put("apps", "web", app);
    }
  });
});

describe("the admin's credentials", () => {
  it("leave the platform's environment once read: the redis-server it starts never gets them", async () => {
    const dir = await mkdtemp(join(tmpdir(), "platform-env-"));
    // REDIS_SERVER names the binary the platform starts: a script that notes its environment first.
    const seen = join(dir, "environment-seen");
    const wrapper = join(dir, "redis-server");
    await writeFile(wrapper, `#!/bin/sh\nenv > "${seen}"\nexec redis-server "$@"\n`, { mode: 0o755 });
    const platform = startLongRunning(process.execPath, ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "platform", "--port", "0", "--data-dir", join(dir, "data")], {
      cwd: resolve(import.meta.dirname, "../../../.."),
      env: { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-secret-in-env", REDIS_SERVER: wrapper },
    });
    try {
      await platform.waitForUrl(/listening on/, 60_000);
      const environment = await readFile(seen, "utf8");
      expect(environment).toMatch(/^PATH=/m);
      expect(environment).not.toContain("admin-secret-in-env");
      expect(environment).not.toContain("PLATFORM_ADMIN_");
    } finally {
      await platform.stop();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("names used again, and credentials changed", () => {
  let t: TestPlatform;
  let provider: TestProvider;
  const said: string[] = [];
  beforeAll(async () => {
    t = await startTestPlatform("memory", { allowRun: true, say: (line) => said.push(line) });
    provider = await startTestProvider();
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("gives a team made again under a removed team's name none of its grants", async () => {
    await t.admin.ok(t.admin.post("/teams", { json: { name: "helpers" } }));
    await t.admin.ok(t.admin.put("/services/instances/permission/kv1/helpers"));
    await t.admin.ok(t.admin.put("/services/kv/helpers"));
    await t.admin.ok(t.admin.delete("/teams/helpers"));

    const mallory = await t.admin.user("mallory@example.com");
    await mallory.ok(mallory.post("/teams", { json: { name: "helpers" } }));
    await mallory.ok(mallory.post("/apps", { json: { name: "evil", platform: "node" } }));
    expect([403, 404]).toContain((await mallory.put("/services/instances/kv1/evil")).status);
    expect([403, 404]).toContain((await mallory.get("/services/kv")).status);
    expect(provider.handlers()).not.toContain("bindApp");
  });

  it("removes a team's action grants with it: none passes to a team made again under its name", async () => {
    const operations = [{ method: "POST", path: "/rotate", action: "rotate" }];
    await t.admin.ok(t.admin.put("/1.31/services/kv/manifest", { json: { enabled: true, strict_actions: true, operations } }));
    await t.admin.ok(t.admin.post("/teams", { json: { name: "auditors" } }));
    await t.admin.ok(t.admin.put("/1.31/services/kv/actions/rotate/auditors"));
    await t.admin.ok(t.admin.delete("/teams/auditors"));
    expect((await t.admin.ok(t.admin.get("/1.31/services/kv/actions"))).json()).toEqual({});

    const trudy = await t.admin.user("trudy@example.com");
    await trudy.ok(trudy.post("/teams", { json: { name: "auditors" } }));
    expect((await t.admin.ok(t.admin.get("/1.31/services/kv/actions"))).json()).toEqual({});
  });

  it("refuses to remove the admin team", async () => {
    const answer = await t.admin.delete("/teams/admin");
    expect(answer.status).toBe(403);
    expect(answer.text).toMatch(/"admin" cannot be removed/);
  });

  it("leaves nothing of a removed app to the next app of its name: log, deploys, app tokens", async () => {
    await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "node" } }));
    await t.admin.ok(t.admin.post("/apps/shop/run?once=true", { text: "echo secret-output" }));
    await t.admin.ok(t.admin.post("/apps/shop/deploy", { json: { image: "shop:v1" } }));
    const token = (await t.admin.ok(t.admin.post("/tokens", { json: { client: "shop" } }))).json<{ Token: string }>().Token;
    const asApp = new Api(t.url, token);
    await asApp.ok(asApp.get("/apps/shop"));
    // An app token opens its own app's routes only, not a bind route that names the app.
    expect((await asApp.put("/services/instances/kv1/shop")).status).toBe(401);

    await t.admin.ok(t.admin.delete("/apps/shop"));
    await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "node" } }));
    expect((await t.admin.ok(t.admin.get("/apps/shop/log?lines=1000"))).text).not.toContain("secret-output");
    expect((await t.admin.ok(t.admin.get("/deploys?app=shop"))).text).not.toContain("shop:v1");
    expect((await asApp.get("/apps/shop")).status).toBe(401);
  });

  it("ends every login of a user whose password is changed or reset", async () => {
    await t.admin.user("dana@example.com", "first-password");
    const first = await t.anonymous.login("dana@example.com", "first-password");
    const second = await t.anonymous.login("dana@example.com", "first-password");
    await first.ok(first.put("/users/password", { json: { old: "first-password", new: "second-password" } }));
    expect((await first.get("/users/info")).status).toBe(401);
    expect((await second.get("/users/info")).status).toBe(401);

    const third = await t.anonymous.login("dana@example.com", "second-password");
    await t.anonymous.ok(t.anonymous.post("/users/dana@example.com/password"));
    const resetToken = /token=([0-9a-f]+)/.exec(said.findLast((line) => line.includes("dana@example.com")) ?? "")?.[1];
    await t.anonymous.ok(t.anonymous.post(`/users/dana@example.com/password?token=${resetToken}`));
    expect((await third.get("/users/info")).status).toBe(401);
  });
});

describe("PLATFORM_ADMIN_EMAIL naming an account someone registered first", () => {
  it("takes the account over with the given password, ends its logins, and says so", async () => {
    const redis = await startRedisServer();
    const state = { kind: "redis" as const, url: redis.url };
    try {
      const first = await startTestPlatform("memory", { state, openSignup: true });
      await first.anonymous.ok(first.anonymous.post("/users", { json: { email: "boss@example.com", password: "squatter-password" } }));
      const squatter = await first.anonymous.login("boss@example.com", "squatter-password");
      await first.stop();

      const said: string[] = [];
      const second = await startTestPlatform("memory", { state, admin: { email: "boss@example.com", password: "boss-password" }, say: (line) => said.push(line) });
      try {
        expect(said.join("\n")).toMatch(/PLATFORM_ADMIN_EMAIL names the existing user boss@example.com, who was not an admin: the account was taken over/);
        expect((await new Api(second.url, squatter.token).get("/users/info")).status).toBe(401);
        expect((await second.anonymous.post("/users/boss@example.com/tokens", { json: { password: "squatter-password" } })).status).toBe(401);
        const boss = await second.anonymous.post("/users/boss@example.com/tokens", { json: { password: "boss-password" } });
        expect(boss.json()).toMatchObject({ is_admin: true });
      } finally {
        await second.stop();
      }
    } finally {
      await redis.stop();
    }
  });
});

describe("what reaches the operator's terminal", () => {
  it("refuses control characters in an e-mail address", async () => {
    const t = await startTestPlatform("memory", { openSignup: true });
    try {
      for (const email of ["a\u001b[2J@example.com", "a\u0000b@example.com", "x@exa\u0007mple.com"]) {
        expect((await t.anonymous.post("/users", { json: { email, password: "secret-1" } })).status, JSON.stringify(email)).toBe(400);
      }
    } finally {
      await t.stop();
    }
  });

  it("shows a provider's control characters escaped, never raw", async () => {
    const provider = await startTestProvider({ bindApp: () => ({ "\u001b[2J\u001b[31m\u202eFAKE": "x" }) });
    const platform = startLongRunning(process.execPath, ["--conditions=source", "--import", "tsx", "packages/provider-kit/src/cli/main.ts", "platform", "--port", "0", "--memory"], {
      cwd: resolve(import.meta.dirname, "../../../.."),
      env: { PLATFORM_ADMIN_EMAIL: "admin@example.com", PLATFORM_ADMIN_PASSWORD: "admin-password" },
    });
    try {
      const admin = await new Api(await platform.waitForUrl(/listening on/, 60_000)).login("admin@example.com", "admin-password");
      await admin.ok(admin.post("/services", { text: manifest("kv", provider.running.url) }));
      await admin.ok(admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
      await admin.ok(admin.post("/apps", { json: { name: "web", platform: "node" } }));
      expect((await admin.put("/services/instances/kv1/web")).status).toBe(500); // not a variable name
      await eventually(() => platform.output().includes("bind-app"), 10_000, "the bind call printed");
      expect(platform.output()).not.toMatch(UNPRINTED);
      expect(platform.output()).toContain("\\u001b[2J\\u001b[31m\\u202eFAKE");
    } finally {
      await platform.stop();
      await provider.stop();
    }
  });

  it("shows what any provider writes in its status and errors printable, one line of at most 200 characters", async () => {
    // A provider in any language: a plain HTTP server that answers with terminal controls.
    const hostile = `\u001b[2Jcleared\u0007 \u009b31m \u202eevil\u202c zero\u200bwidth\ufeff\r\nnext ${"z".repeat(300)}`;
    const server = createServer((req, res) => {
      let body = "";
      req.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      req.on("end", () => {
        if (req.method === "POST" && req.url === "/resources") {
          const refused = new URLSearchParams(body).get("name") === "kv2";
          res.writeHead(refused ? 400 : 201, { "Content-Type": "text/plain" }).end(refused ? hostile : "");
        } else if (req.method === "GET" && req.url === "/resources/kv1/status") {
          res.writeHead(202, { "Content-Type": "text/plain" }).end(hostile);
        } else {
          res.writeHead(200).end();
        }
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const t = await startTestPlatform("memory");
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("kv", `http://127.0.0.1:${(server.address() as AddressInfo).port}`) }));
      await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
      const status = await t.admin.ok(t.admin.get("/services/instances/kv1/status"));
      expect(status.text).toMatch(/^Service instance "kv1" is pending \(\\u001b\[2Jcleared\\u0007 \\u009b31m \\u202eevil\\u202c zero\\u200bwidth\\ufeff next z+\)$/);
      expect(status.text).not.toMatch(UNPRINTED);
      expect(status.text.length).toBe('Service instance "kv1" is pending ()'.length + 200);

      const refused = await t.admin.post("/services/instances", { json: { name: "kv2", service_name: "kv" } });
      expect(refused.status).toBeGreaterThanOrEqual(400);
      expect(refused.text).toContain("\\u001b[2Jcleared");
      expect(refused.text).not.toMatch(UNPRINTED);
    } finally {
      await t.stop();
      server.close();
    }
  });
});

describe("what one team sees of another's", () => {
  let t: TestPlatform;
  let provider: TestProvider;
  beforeAll(async () => {
    t = await startTestPlatform("memory");
    provider = await startTestProvider();
    const endpoint = provider.running.url.replace("http://", "http://embedded:url-secret@");
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", endpoint, { doc: "internal notes" }) }));
  });
  afterAll(async () => {
    await t.stop();
    await provider.stop();
  });

  it("shows a service's provider without the credentials in its endpoint, and its doc only to its users", async () => {
    const outsider = await t.admin.user("outsider@example.com");
    expect((await outsider.get("/services/kv/doc")).status).toBe(403);
    const shown = (await t.admin.ok(t.admin.get("/services/kv/provider"))).json<{ endpoint: string }>();
    expect(shown.endpoint).toBe(provider.running.url);
    expect(JSON.stringify(shown)).not.toContain("url-secret");
  });

  it("lists only the provider calls about its own instances and apps", async () => {
    const [alice, bob] = [await t.admin.user("alice@example.com"), await t.admin.user("bob@example.com")];
    for (const [user, team] of [[alice, "team-a"], [bob, "team-b"]] as const) {
      await user.ok(user.post("/teams", { json: { name: team } }));
      await t.admin.ok(t.admin.put(`/services/kv/${team}`));
    }
    await alice.ok(alice.post("/services/instances", { json: { name: "alice-kv", service_name: "kv" } }), 201);
    await alice.ok(alice.post("/apps", { json: { name: "alice-app", platform: "node" } }));
    await alice.ok(alice.put("/services/instances/alice-kv/alice-app"));
    await bob.ok(bob.post("/services/instances", { json: { name: "bob-kv", service_name: "kv" } }), 201);

    const seenBy = async (api: Api) => (await api.ok(api.get("/provider-calls"))).json<Array<{ instance?: string }>>().map((call) => call.instance);
    expect(await seenBy(bob)).toEqual(expect.arrayContaining(["bob-kv"]));
    expect(await seenBy(bob)).not.toContain("alice-kv");
    expect(await seenBy(alice)).not.toContain("bob-kv");
    expect(await seenBy(t.admin)).toEqual(expect.arrayContaining(["alice-kv", "bob-kv"]));
  });
});

describe("logging in", () => {
  it("answers an unknown user exactly as a wrong password", async () => {
    const t = await startTestPlatform("memory");
    try {
      const unknown = await t.anonymous.post("/users/nobody@example.com/tokens", { json: { password: "secret-1" } });
      const wrong = await t.anonymous.post(`/users/${ADMIN.email}/tokens`, { json: { password: "not-the-password" } });
      expect([unknown.status, unknown.text]).toEqual([wrong.status, wrong.text]);
      expect(wrong.status).toBe(401);
    } finally {
      await t.stop();
    }
  });

  /** A login sent from `source`, one of this machine's loopback addresses (127.0.0.0/8). */
  function loginFrom(url: string, source: string, email: string, password: string): Promise<RawAnswer> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const body = JSON.stringify({ password });
      const headers = { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) };
      const req = httpRequest({ host: hostname, port, localAddress: source, method: "POST", path: `/users/${email}/tokens`, headers }, (res) => {
        let text = "";
        res.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("error", reject);
      req.end(body);
    });
  }

  it("checks a guesser's passwords one wait apart: others sent meanwhile are refused unchecked", async () => {
    const t = await startTestPlatform("memory");
    try {
      const guess = (attempt: number) => loginFrom(t.url, "127.0.0.2", ADMIN.email, `guess-${attempt}`);
      for (let attempt = 0; attempt < 6; attempt++) expect((await guess(attempt)).status).toBe(401);
      // Past the free failures, one guess is held for its wait and the others are refused.
      const burst = await Promise.all([6, 7, 8, 9].map(guess));
      expect(burst.map((answer) => answer.status).sort()).toEqual([401, 429, 429, 429]);
      expect(burst.find((answer) => answer.status === 429)!.text).toMatch(/^Too many failed logins: try again in \d+ s\./);
    } finally {
      await t.stop();
    }
  });

  it("lets the right password in while a guesser is throttled: at once from elsewhere, after the wait from the guesser's address", async () => {
    const t = await startTestPlatform("memory");
    try {
      for (let attempt = 0; attempt < 6; attempt++) await loginFrom(t.url, "127.0.0.2", ADMIN.email, `guess-${attempt}`);
      expect((await loginFrom(t.url, "127.0.0.1", ADMIN.email, ADMIN.password)).status).toBe(200);
      expect((await loginFrom(t.url, "127.0.0.2", ADMIN.email, ADMIN.password)).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});

describe("password reset requests", () => {
  it("keep one outstanding per user and make no other within a minute, printing nothing more", async () => {
    const said: string[] = [];
    const t = await startTestPlatform("memory", { say: (line) => said.push(line) });
    try {
      await t.admin.user("erin@example.com");
      await t.anonymous.ok(t.anonymous.post("/users/erin@example.com/password"));
      for (let i = 0; i < 3; i++) await t.anonymous.ok(t.anonymous.post("/users/erin@example.com/password"));
      expect(said.filter((line) => line.startsWith("password reset for erin@example.com"))).toHaveLength(1);
      expect((await t.platform.context.store.all("resets")).filter((reset) => reset.email === "erin@example.com")).toHaveLength(1);
    } finally {
      await t.stop();
    }
  });

  it("answer an unknown address exactly as a user's, with or without a token", async () => {
    const said: string[] = [];
    const t = await startTestPlatform("memory", { say: (line) => said.push(line) });
    try {
      await t.admin.user("frank@example.com");
      const answers = async (email: string) => {
        const asked = [await t.anonymous.post(`/users/${email}/password`), await t.anonymous.post(`/users/${email}/password`)];
        const withToken = await t.anonymous.post(`/users/${email}/password?token=${"0".repeat(40)}`);
        return [...asked, withToken].map((answer) => [answer.status, answer.text]);
      };
      const [known, unknown] = [await answers("frank@example.com"), await answers("nobody@example.com")];
      expect(unknown).toEqual(known);
      expect(known.map(([status]) => status)).toEqual([200, 200, 403]);
      expect(said.join("\n")).not.toContain("nobody@example.com");
    } finally {
      await t.stop();
    }
  });
});

describe("a provider that echoes what it was sent", () => {
  it("never gets the service's credentials repeated: not in messages, the timeline or the health check", async () => {
    const password = "echoed-provider-password";
    const basic = Buffer.from(`echo-user:${password}`).toString("base64");
    let probes = 0;
    const echo = createServer((req, res) => {
      if (req.url === "/healthcheck") probes++;
      res.writeHead(req.url === "/resources/plans" ? 500 : 400, { "Content-Type": "text/plain" });
      res.end(`I got: ${JSON.stringify(req.headers)} ${password}`);
    });
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    const t = await startTestPlatform("memory");
    try {
      const url = `http://127.0.0.1:${(echo.address() as AddressInfo).port}`;
      await t.admin.ok(t.admin.post("/services", { text: stringify({ id: "echo", username: "echo-user", password, endpoint: { production: url } }) }));
      const created = await t.admin.post("/services/instances", { json: { name: "e1", service_name: "echo" } });
      const health = await t.admin.get("/healthcheck/?check=all");
      const calls = await t.admin.get("/provider-calls?service=echo");
      for (const text of [created.text, health.text, calls.text]) {
        expect(text).not.toContain(password);
        expect(text).not.toContain(basic);
      }
      expect(created.text).toContain("<redacted: the password>");
      // Polled, the health check asks the provider at most once every few seconds.
      await t.admin.get("/healthcheck/?check=all");
      expect(probes).toBe(1);
    } finally {
      await t.stop();
      echo.close();
    }
  });

  it("counts a provider whose optional plans route answers 405 as healthy", async () => {
    const minimal = createServer((_req, res) => {
      res.writeHead(_req.url === "/resources/plans" ? 405 : 404);
      res.end();
    });
    minimal.listen(0, "127.0.0.1");
    await once(minimal, "listening");
    const t = await startTestPlatform("memory");
    try {
      await t.admin.ok(t.admin.post("/services", { text: manifest("minimal", `http://127.0.0.1:${(minimal.address() as AddressInfo).port}`) }));
      const health = await t.admin.get("/healthcheck/?check=all");
      expect(health.text).toMatch(/^Provider minimal: WORKING/m);
      expect(health.status).toBe(200);
    } finally {
      await t.stop();
      minimal.close();
    }
  });
});

describe("a platform killed in the middle of a bind", () => {
  it("undoes the bind when it starts again: the provider unbinds, no record keeps it", async () => {
    let entered!: () => void;
    const inBind = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const provider = await startTestProvider({
      bindApp: async () => {
        entered();
        await released;
        return { KV_URL: "kv://late" };
      },
    });
    const dataDir = await mkdtemp(join(tmpdir(), "platform-killed-"));
    let platform = await startPlatformProcess(dataDir);
    try {
      const admin = platform.api;
      await admin.ok(admin.post("/services", { text: manifest("kv", provider.running.url) }));
      await admin.ok(admin.post("/services/instances", { json: { name: "kv1", service_name: "kv" } }), 201);
      await admin.ok(admin.post("/apps", { json: { name: "web", platform: "node" } }));
      void admin.put("/services/instances/kv1/web").catch(() => {});
      await inBind;
      platform.process.signal("SIGKILL");
      await eventually(() => !platform.process.groupAlive(), 20_000, "the killed platform and its redis-server gone");
      release();

      await platform.stop();
      platform = await startPlatformProcess(dataDir);
      expect(platform.process.output()).toMatch(/the bind of the instance kv1 to the app web was cut off when the platform stopped: undone/);
      await eventually(() => provider.handlers().includes("unbindApp"), 20_000, "the provider told to unbind");
      expect((await platform.api.get("/services/instances?app=web")).json()).toEqual([{ service: "kv", instances: [] }]);
      const env = (await platform.api.get("/apps/web/env")).json<Array<{ name: string }>>().map((variable) => variable.name);
      expect(env).not.toContain("KV_URL");
      await platform.api.ok(platform.api.put("/services/instances/kv1/web")); // bindable again
    } finally {
      await platform.stop();
      await provider.stop();
      await removeDir(dataDir);
    }
  });
});

describe("a platform killed in the middle of two binds, whose provider is slow to undo them", () => {
  it("serves at once when it starts again, undoes both side by side, and gives up on a provider that never answers", async () => {
    const binds = new Set<string>();
    const unbinds = new Set<string>();
    let releaseBinds!: () => void;
    const bindsReleased = new Promise<void>((resolve) => (releaseBinds = resolve));
    let releaseUnbind!: () => void;
    const unbindReleased = new Promise<void>((resolve) => (releaseUnbind = resolve));
    // kv1's unbind waits to be released; kv2's never answers.
    const provider = createServer((req, res) => {
      const bind = /^\/resources\/([^/]+)\/bind-app$/.exec(req.url ?? "");
      const answer = (status: number, body = "") => res.writeHead(status, { "Content-Type": "application/json" }).end(body);
      req.resume();
      if (bind && req.method === "POST") {
        binds.add(bind[1]!);
        void bindsReleased.then(() => answer(201, '{"KV_URL":"kv://late"}'));
      } else if (bind && req.method === "DELETE") {
        unbinds.add(bind[1]!);
        if (bind[1] === "kv1") void unbindReleased.then(() => answer(200));
      } else answer(req.url === "/resources" ? 201 : 200, req.url === "/resources/plans" ? "[]" : "");
    });
    provider.listen(0, "127.0.0.1");
    await once(provider, "listening");
    const providerUrl = `http://127.0.0.1:${(provider.address() as AddressInfo).port}`;
    const dataDir = await mkdtemp(join(tmpdir(), "platform-killed-twice-"));
    let platform = await startPlatformProcess(dataDir);
    try {
      const admin = platform.api;
      await admin.ok(admin.post("/services", { text: manifest("kv", providerUrl) }));
      for (const n of [1, 2]) {
        await admin.ok(admin.post("/services/instances", { json: { name: `kv${n}`, service_name: "kv" } }), 201);
        await admin.ok(admin.post("/apps", { json: { name: `web${n}`, platform: "node" } }));
        void admin.put(`/services/instances/kv${n}/web${n}`).catch(() => {});
      }
      await eventually(() => binds.size === 2, 20_000, "both binds at the provider");
      platform.process.signal("SIGKILL");
      await eventually(() => !platform.process.groupAlive(), 20_000, "the killed platform and its redis-server gone");
      releaseBinds();
      await platform.stop();

      platform = await startPlatformProcess(dataDir);
      // Serving while both unbinds wait at the provider, sent side by side.
      await eventually(() => unbinds.size === 2, 20_000, "both unbinds at the provider at once");
      expect((await platform.api.ok(platform.api.get("/apps"))).json<Array<{ Name: string }>>().map((app) => app.Name)).toEqual(["web1", "web2"]);
      releaseUnbind();
      const undone = (n: number) => `the bind of the instance kv${n} to the app web${n} was cut off when the platform stopped: undone`;
      await eventually(() => platform.process.output().includes(undone(1)), 20_000, "kv1's bind undone");
      // kv2's provider never answers: the undo gives up on it after its short limit.
      await eventually(() => platform.process.output().includes(undone(2)), 60_000, "kv2's bind undone without the provider");
      for (const n of [1, 2]) {
        expect((await platform.api.get(`/services/instances?app=web${n}`)).json()).toEqual([{ service: "kv", instances: [] }]);
      }
    } finally {
      await platform.stop();
      provider.closeAllConnections();
      provider.close();
      await removeDir(dataDir);
    }
  }, 180_000); // two platform starts and the undo's 10 s limit, on a loaded runner
});

