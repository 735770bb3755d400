/**
 * The kit against a provider built with provider-kit's own createProvider: a small in-memory
 * resource, registry on, provisioning in the background (`pending: true` + `provision`).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { BadRequestError, createProvider, MemoryStore, type ProviderHandlers, type Provider } from "provider-kit";
import { runConformance, type Encoding, type Variant } from "../../src/conformance/index.js";
import { CREDENTIALS, PROVISION_MS, FAST, ids, resultOf, statusOf } from "./helpers.js";

/** Each binding's own password: the same again on a rebind, a new one once the binding was undone. */
function bindingPasswords() {
  const passwords = new Map<string, string>();
  const key = (...binding: string[]) => binding.join("\0");
  return {
    of(...binding: string[]): string {
      const password = passwords.get(key(...binding)) ?? randomBytes(12).toString("base64url");
      passwords.set(key(...binding), password);
      return password;
    },
    revoke: (...binding: string[]) => passwords.delete(key(...binding)),
  };
}

/** The resource: a map of instances, each ready once its background provisioning ran. */
function inMemoryHandlers(): ProviderHandlers {
  const resources = new Map<string, { size: string }>();
  const passwords = bindingPasswords();
  return {
    plans: () => [{ name: "small", description: "A small in-memory thing" }],
    create: (request) => {
      if (request.plan && request.plan !== "small") throw new BadRequestError(`Unknown plan "${request.plan}": the only plan is small.`);
      return { pending: true, data: { size: request.plan ?? "small" } };
    },
    provision: async (record, context) => {
      await context.progress("allocating the thing");
      await sleep(PROVISION_MS);
      resources.set(record.name, { size: record.data.size as string });
    },
    update: () => {},
    destroy: (request) => {
      resources.delete(request.instance);
    },
    bindApp: (request) => {
      const app = request.appName ?? request.appHost ?? "";
      return { THING_URL: `mem://${request.instance}`, THING_APP: app, THING_PASSWORD: passwords.of(request.instance, app) };
    },
    unbindApp: (request) => {
      passwords.revoke(request.instance, request.appName ?? request.appHost ?? "");
    },
    bindUnit: () => {},
    unbindUnit: () => {},
    bindJob: (request) => ({ THING_URL: `mem://${request.instance}`, THING_JOB: request.jobName, THING_PASSWORD: passwords.of(request.instance, `job:${request.jobName}`) }),
    unbindJob: (request) => {
      passwords.revoke(request.instance, `job:${request.jobName}`);
    },
    info: (request) => [{ label: "Size", value: resources.get(request.instance)?.size ?? "unknown" }],
  };
}

/** Skipped: this provider has no actions, so the run is given no manifest. */
const ACTION_CHECKS = ["actions.exists", "actions.auth", "actions.no-405", "actions.bad-input"];
/** Skipped: its plans need no pool, so it is not multi-cluster (test/conformance/pools.test.ts checks one that is). */
const POOL_CHECKS = ["pools.pool-read", "pools.plans"];

let provider: Provider;
let server: ReturnType<Provider["listen"]>;
let url: string;

beforeAll(async () => {
  provider = createProvider(inMemoryHandlers(), {
    auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password },
    registry: { store: new MemoryStore() },
    logger: pino({ level: "silent" }),
  });
  server = provider.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await provider.close();
});

describe("a provider built with createProvider", () => {
  const runs: Array<[Variant, Encoding]> = [
    ["current", "form"],
    ["current", "json"],
    ["A", "form"],
    ["B", "form"],
  ];

  it.each(runs)("passes every check of variant %s with %s bodies", async (variant, encoding) => {
    const report = await runConformance({ url, ...CREDENTIALS, ...FAST, variant, encoding });
    const problems = report.results
      .filter((result) => result.outcome === "fail" || result.outcome === "warn")
      .map((result) => `${result.id}: ${result.detail}`);
    expect(problems).toEqual([]);
    expect(report.passed).toBe(true);
    // Provisioning runs in the background: the bind sent while pending was refused with 412.
    expect(resultOf(report, "bind-app.provisioning").outcome).toBe("pass");
    // Its progress came with the 202s, as text.
    expect(resultOf(report, "status.pending-text").outcome).toBe("pass");
    expect(ids(report, "skip")).toEqual(variant === "current" ? [...POOL_CHECKS, "status.text-body", ...ACTION_CHECKS] : []);
    expect(report.leftovers).toEqual([]);
    expect(await statusOf(url, report.instance)).toBe(404);
  });
});

describe("a createProvider provider without the optional handlers", () => {
  it("passes with warnings on the SHOULD checks of the calls it leaves out (404 = not supported)", async () => {
    const { plans, create, provision, destroy, bindApp, unbindApp } = inMemoryHandlers();
    const minimal = createProvider({ plans, create, provision, destroy, bindApp, unbindApp }, {
      auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password },
      registry: { store: new MemoryStore() },
      logger: pino({ level: "silent" }),
    });
    const listening = minimal.listen(0, "127.0.0.1");
    await new Promise((resolve) => listening.once("listening", resolve));
    try {
      const minimalUrl = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
      const report = await runConformance({ url: minimalUrl, ...CREDENTIALS, ...FAST });
      expect(ids(report, "fail")).toEqual([]);
      expect(ids(report, "warn")).toEqual(["bind-unit.supported", "bind-job.supported", "update.supported", "info.supported"]);
      expect(resultOf(report, "bind-job.result")).toMatchObject({ outcome: "skip", detail: "needs bind-job.supported, which did not hold" });
      expect(report.passed).toBe(true);
      // Unit binds are optional on Variant A too: their 404 ("not supported") only warns.
      const onA = await runConformance({ url: minimalUrl, ...CREDENTIALS, ...FAST, variant: "A" });
      expect(ids(onA, "fail")).toEqual([]);
      expect(ids(onA, "warn")).toEqual(["bind-unit.supported", "info.supported"]);
      expect(resultOf(onA, "bind-unit.unbind")).toMatchObject({ outcome: "skip", detail: "needs bind-unit.supported, which did not hold" });
      expect(onA.passed).toBe(true);
    } finally {
      listening.closeAllConnections();
      await new Promise((resolve) => listening.close(resolve));
      await minimal.close();
    }
  });
});
