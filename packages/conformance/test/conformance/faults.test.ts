/**
 * The kit catches faults: each broken provider is the reference with one fault switched on.
 * Exactly the checks for the broken rule fail (or warn), the ones that only repeat a root cause
 * say so, checks that need the broken step are skipped with the reason, and every other check
 * still passes. Each case asserts the kit's exact verdicts.
 */
import express from "express";
import { describe, expect, it } from "vitest";
import { answerKey } from "../../src/conformance/evidence.js";
import { adviceLine, checkById } from "../../src/conformance/checks.js";
import { formatJson, formatJunit, formatTree, levelIn, runConformance, type Encoding, type ProgressEvent, type Variant } from "../../src/conformance/index.js";
import { CREDENTIALS, PROVISION_MS, FAST, ids, resultOf, serving, statusOf } from "./helpers.js";
import { referenceProvider, SHARED_PASSWORD, type Fault } from "./reference-provider.js";

interface Case {
  fault: Fault;
  /** Exactly the checks that fail. */
  fails: string[];
  /** Exactly the checks that warn. Default none. */
  warns?: string[];
  /** Exactly the failures and warnings reported as following from another check: id → its root cause. */
  follows?: Record<string, string>;
  /** Checks skipped because a check they need did not pass, with the reason given. */
  skips?: Record<string, string>;
  /** The exact detail of some verdicts; `{instance}` stands for the run's instance. */
  details?: Record<string, string | RegExp>;
  /** Checks that must pass (where the old kit skipped or failed them). */
  passes?: string[];
  password?: string;
  /** Default PROVISION_MS (asynchronous provisioning); 0 provisions synchronously. */
  provisionMs?: number;
  variant?: Variant;
  encoding?: Encoding;
  /** What the run could not remove (each binding's name, or the instance's): the provider refused its undo. Default none. */
  leftovers?: string[];
}

const HTML_CRASH = /^POST \/resources answered 500 with an HTML page titled "500 Internal Server Error" \(text\/html; charset=utf-8, \d+ characters\)/;

const cases: Case[] = [
  {
    fault: "update-405",
    fails: ["update.status", "not-found.update", "transport.no-405"],
    follows: { "not-found.update": "update.status", "transport.no-405": "update.status" },
    skips: { "update.supported": "needs update.status, which failed" },
    details: {
      "update.status":
        "PUT /resources/{instance} answered 405, expected 2xx, or 404 when not supported (405 means the provider does not serve PUT on /resources/<instance>)",
    },
  },
  { fault: "numeric-env", fails: ["bind-app.env-strings"] },
  {
    fault: "empty-bind-body",
    fails: ["bind-app.json"],
    skips: {
      "bind-app.env-strings": "needs bind-app.json, which failed",
      "bind-app.rebind": "needs bind-app.json, which failed",
      "isolation.apps": "needs bind-app.json, which failed",
      "isolation.swap": "needs isolation.apps, which was skipped",
    },
  },
  { fault: "bind-unknown-instance-200", fails: ["not-found.bind-app"] },
  {
    fault: "no-auth",
    fails: ["auth.no-credentials", "auth.wrong-password"],
    follows: { "auth.wrong-password": "auth.no-credentials" },
    skips: { "auth.password-colon": "needs auth.wrong-password, which failed" },
  },
  // The classic split(":") bug: only visible with the password followed by a colon and more.
  { fault: "password-split-all", fails: ["auth.password-colon"], password: "no-colons-here" },
  {
    fault: "info-redirect",
    fails: ["info.status", "not-found.info", "transport.no-redirect"],
    follows: { "not-found.info": "info.status", "transport.no-redirect": "info.status" },
    skips: { "info.supported": "needs info.status, which failed", "info.shape": "needs info.supported, which was skipped" },
  },
  { fault: "status-200-empty", fails: ["status.text-body"] },
  {
    fault: "status-pending-json",
    fails: [],
    warns: ["status.pending-text"],
    details: { "status.pending-text": "GET /resources/{instance}/status answered 202 with a JSON object (15 characters): send the progress as one short line of plain text" },
  },
  { fault: "duplicate-500", fails: ["create.duplicate"] },
  // The unknown-plan create needs no plan list: it is sent even when the list is unreadable.
  { fault: "plans-text", fails: ["plans.shape"], passes: ["create.unknown-plan"] },
  { fault: "unbind-gone-404", fails: ["unbind-app.repeat"] },
  { fault: "bind-while-provisioning", fails: ["bind-app.provisioning"] },
  {
    fault: "create-500",
    fails: ["create.status"],
    skips: {
      "create.duplicate": "needs create.status, which failed",
      "status.ready": "needs create.status, which failed",
      "bind-app.status": "needs create.status, which failed",
      "unbind-app.status": "needs bind-app.status, which was skipped",
      "destroy.status": "needs create.status, which failed",
    },
  },

  // Rebind, repeat unbind and duplicate create hold for every generation of the platform.
  { fault: "duplicate-500", variant: "A", fails: ["create.duplicate"] },
  { fault: "rebind-409", variant: "A", fails: ["bind-app.rebind"] },
  { fault: "unbind-gone-404", variant: "B", fails: ["unbind-app.repeat"] },
  { fault: "duplicate-500", variant: "B", fails: ["create.duplicate"] },

  // The platform ignores 404 on unbind: a 2xx for an unknown instance only warns. That unbind
  // revokes nothing either: binding the app again gives its old password back.
  {
    fault: "unbind-without-lookup",
    fails: [],
    warns: ["not-found.unbind-app", "isolation.swap"],
    details: {
      "not-found.unbind-app": /^DELETE \/resources\/pkc-missing-[0-9a-f]+\/bind-app answered 200 for an instance that does not exist; the platform ignores 404 on unbind/,
    },
  },
  // No info route: the platform reads any non-200 as "no extra info". One root cause, warnings only.
  {
    fault: "info-405",
    fails: [],
    warns: ["info.status", "not-found.info", "transport.no-405"],
    follows: { "not-found.info": "info.status", "transport.no-405": "info.status" },
    skips: { "info.supported": "needs info.status, which did not hold" },
    details: {
      "info.status":
        'GET /resources/{instance} answered 405, expected 200, or 404 when there is no extra info (405 means the provider does not serve GET on /resources/<instance>); the platform reads it as "no extra info"',
    },
  },
  // A broken status route, instance created synchronously: the platform binds anyway, so the kit does too.
  {
    fault: "status-500",
    provisionMs: 0,
    fails: ["status.ready"],
    warns: ["not-found.status"],
    follows: { "not-found.status": "status.ready" },
    passes: ["bind-app.status", "bind-app.rebind", "bind-job.status", "update.status", "info.status", "unbind-app.status", "unbind-app.repeat", "isolation.apps"],
  },
  // The same, still provisioning: a bind answers 412, so what needs a ready instance is skipped.
  {
    fault: "status-500",
    fails: ["status.ready"],
    warns: ["not-found.status"],
    follows: { "not-found.status": "status.ready" },
    skips: {
      "bind-app.status": "needs status.ready, which did not pass, and POST /resources/{instance}/bind-app answered 412 (still provisioning)",
      "update.status": "needs status.ready, which did not pass, and POST /resources/{instance}/bind-app answered 412 (still provisioning)",
      "unbind-app.status": "needs bind-app.status, which was skipped",
    },
  },
  // A 404 naming the instance the run created is a lookup that missed, not a missing route.
  {
    fault: "status-lookup-404",
    provisionMs: 0,
    fails: ["status.ready"],
    passes: ["not-found.status", "bind-app.status"],
    details: {
      "status.ready":
        'GET /resources/{instance}/status answered 404 naming the instance this run created: the status route cannot find it, and the platform reads that 404 as "status not implemented"; look the instance up where the create put it',
    },
  },
  // A framework's crash page explains nothing.
  {
    fault: "duplicate-crash-page",
    fails: ["create.duplicate", "errors.explained"],
    warns: ["errors.plain-text"],
    // One root cause: the crash page is the duplicate create's answer.
    follows: { "errors.explained": "create.duplicate", "errors.plain-text": "create.duplicate" },
    details: { "errors.explained": HTML_CRASH },
  },
  {
    fault: "unknown-plan-crash-page",
    fails: ["create.unknown-plan", "errors.explained"],
    warns: ["errors.plain-text"],
    follows: { "errors.explained": "create.unknown-plan", "errors.plain-text": "create.unknown-plan" },
    details: {
      "create.unknown-plan":
        /^POST \/resources with plan "pkc-no-such-plan" answered 500 with an HTML page titled "500 Internal Server Error" .*: say that the plan does not exist, and which do$/,
    },
  },
  {
    fault: "unknown-plan-accepted",
    fails: ["create.unknown-plan"],
    details: {
      "create.unknown-plan": 'POST /resources with plan "pkc-no-such-plan", which the provider does not list, answered 201: refuse it with 400 and say which plans exist',
    },
  },
  // No plans at all: the platform offers none, so an unknown plan taken is no failure.
  {
    fault: "no-plans-405",
    fails: [],
    warns: ["plans.status", "create.unknown-plan", "transport.no-405"],
    follows: { "transport.no-405": "plans.status" },
    skips: { "plans.shape": "needs plans.status, which did not hold" },
    details: {
      "create.unknown-plan":
        'POST /resources with plan "pkc-no-such-plan", which the provider does not list, answered 201: refuse it with 400 and say which plans exist (a warning only: the plans could not be read, which the platform takes as "no plans")',
    },
  },
  // Plain-text messages served as text/html are what the platform's user reads: fine.
  { fault: "errors-typed-html", fails: [] },
  { fault: "not-found-pages", fails: [], warns: ["errors.plain-text"] },
  { fault: "json-as-html", fails: [], warns: ["transport.json-content-type"] },
  {
    fault: "shared-credentials",
    fails: [],
    warns: ["isolation.apps", "isolation.instances"],
    skips: { "isolation.swap": "needs isolation.apps, which did not hold" },
    details: {
      "isolation.apps":
        "REF_PASSWORD had the same value for two apps on one instance (values not shown): give each binding its own credentials, so that unbinding one revokes only its access",
      "isolation.instances":
        "REF_PASSWORD had the same value for one app on two instances (values not shown): give each binding its own credentials, so that unbinding one revokes only its access",
    },
  },
  {
    fault: "no-credentials",
    fails: [],
    warns: ["isolation.apps", "isolation.instances"],
    details: {
      "isolation.apps": /^neither bind result carries a credential \(.*\): nothing tells the two apps apart, and unbinding one revokes nothing/,
      "isolation.instances": /^the two instances gave the same variables with the same values, none of them a credential/,
    },
  },

  // Credentials keyed by app-host pass isolation.apps (two addresses, two users), but after a swap
  // the unbind of one app drops the other's user: the first app bound again gets the second's.
  // Today's platform refuses swaps (412 "swapping is deprecated"): the check warns.
  {
    fault: "host-keyed-credentials",
    fails: [],
    warns: ["isolation.swap"],
    passes: ["isolation.apps", "isolation.instances", "bind-app.rebind", "unbind-app.repeat"],
    details: {
      "isolation.swap":
        "after the apps swapped addresses and {instance}-app2 was unbound (twice), binding {instance}-app again gave it the REF_PASSWORD {instance}-app2 had (values not shown): the provider keys bindings by the app's address (app-host), which a swap changes: key them by app-name",
    },
  },
  { fault: "host-keyed-credentials", variant: "A", fails: [], warns: ["isolation.swap"] },
  // The same keyed by address, and a second bind fails: the swap steps still run, and the second
  // app bound again at the first's old address gets the first's user: that unbind dropped it.
  {
    fault: "host-keyed-rebind-500",
    fails: ["bind-app.rebind"],
    warns: ["isolation.swap"],
    passes: ["isolation.apps", "isolation.instances", "unbind-app.status"],
    details: {
      "isolation.swap":
        "after the apps swapped addresses and {instance}-app2 was unbound (twice), binding {instance}-app2 again gave it the REF_USER {instance}-app had (values not shown), so unbinding {instance}-app2 dropped {instance}-app's binding: unbinding one app revokes another's access; the provider keys bindings by the app's address (app-host), which a swap changes: key them by app-name",
    },
  },
  { fault: "host-keyed-credentials", encoding: "json", fails: [], warns: ["isolation.swap"] },
  // Issue 44: keyed by address, and an unbind of a user already dropped fails. The kit's own swap
  // steps dropped the first app's user, so its unbind fails: that follows from isolation.swap. The
  // repeated unbind fails on its own (it would without any swap), and the binding whose unbind
  // the provider keeps refusing is named.
  {
    fault: "host-keyed-roles",
    fails: ["bind-app.rebind", "unbind-app.status", "unbind-app.repeat"],
    warns: ["isolation.swap"],
    follows: { "unbind-app.status": "isolation.swap" },
    details: {
      "unbind-app.status":
        "DELETE /resources/{instance}/bind-app answered 500, expected 2xx; the kit's swap steps had unbound {instance}-app2 at {instance}-app's address (isolation.swap): a provider that keys bindings by address dropped this app's binding then",
      "unbind-app.repeat": "DELETE /resources/{instance}/bind-app answered 500, expected 2xx (an unbind of a binding already gone succeeds)",
    },
    leftovers: ["app {instance}-app"],
  },
  // One user per instance, dropped by any unbind: the kit's own unbind of the second app drops the
  // first's user, so the first app's unbind fails: that follows from the shared credentials. The
  // repeated unbind fails on its own.
  {
    fault: "shared-user-dropped",
    fails: ["unbind-app.status", "unbind-app.repeat"],
    warns: ["isolation.apps"],
    follows: { "unbind-app.status": "isolation.apps" },
    skips: { "isolation.swap": "needs isolation.apps, which did not hold" },
    leftovers: ["app {instance}-app"],
    details: {
      "unbind-app.status":
        "DELETE /resources/{instance}/bind-app answered 500, expected 2xx; the kit had unbound {instance}-app2, which shared REF_PASSWORD with this app (isolation.apps): one binding's unbind dropped what every binding uses",
    },
  },
  // Nothing revoked on unbind: the kit cannot tell it from a provider that derives passwords, so it warns.
  {
    fault: "unbind-keeps-credentials",
    fails: [],
    warns: ["isolation.swap"],
    details: {
      "isolation.swap":
        "after the apps swapped addresses and {instance}-app2 was unbound (twice), binding {instance}-app2 again gave it the same credentials as before (values not shown): the kit cannot tell that the unbind revoked them; give a new binding new credentials",
    },
  },
  // A fresh name refused as taken is a failure of its own; the unknown-plan create, refused as
  // taken too, follows from it; the isolation check that needs the second instance says why it is skipped.
  {
    fault: "names-cut-at-10",
    fails: ["create.fresh-name", "create.unknown-plan"],
    follows: { "create.unknown-plan": "create.fresh-name" },
    skips: { "isolation.instances": "needs create.fresh-name, which failed" },
    details: {
      "create.fresh-name": /^POST \/resources for "pkc-[0-9a-f]{10}-conformance-2", a name never used, answered 409, refused as taken: "pkc-[0-9a-f]{10}-conformance-2" and "pkc-[0-9a-f]{10}-conformance" share their first 26 characters, so the provider cuts names short/,
    },
  },
  // One fault, one root cause. Three routes not served: three root causes; the PUT's 405 is one
  // (its check, its unknown-instance probe and the no-405 rule, which lists only that 405: the
  // plans and info 405s only warn, under their own checks).
  {
    fault: "flask-405s",
    fails: ["update.status", "not-found.update", "transport.no-405"],
    warns: ["plans.status", "info.status", "not-found.info"],
    follows: { "not-found.update": "update.status", "transport.no-405": "update.status", "not-found.info": "info.status" },
    skips: { "plans.shape": "needs plans.status, which did not hold", "info.supported": "needs info.status, which did not hold" },
    passes: ["create.unknown-plan"],
    details: {
      "transport.no-405": /^PUT \/resources\/pkc-missing-[0-9a-f]+ answered 405 \(2 times\): answer 404 on a route the provider does not support$/,
    },
  },
  // No lookup of the instance: one root cause, not one per route.
  {
    fault: "unknown-instance-500",
    fails: [
      "not-found.bind-app",
      "not-found.unbind-app",
      "not-found.bind-unit",
      "not-found.unbind-unit",
      "not-found.bind-job",
      "not-found.unbind-job",
      "not-found.update",
      "not-found.destroy",
    ],
    warns: ["not-found.info", "not-found.status"],
    follows: Object.fromEntries(
      ["unbind-app", "bind-unit", "unbind-unit", "bind-job", "unbind-job", "update", "destroy", "info", "status"].map((route) => [`not-found.${route}`, "not-found.bind-app"]),
    ),
  },
  // Issue 32's Django provider: a password with two colons crashes its auth, and the debug page
  // shows the Authorization header and the API password: disclosed, a fault of its own.
  {
    fault: "debug-page-on-colons",
    password: "no-colons-here",
    fails: ["auth.password-colon", "errors.explained", "transport.no-secret"],
    warns: ["errors.plain-text"],
    follows: { "errors.explained": "auth.password-colon", "errors.plain-text": "auth.password-colon" },
    details: {
      "transport.no-secret":
        /^GET \/resources\/plans answered 500 with the Basic credentials \(base64\) in its body \(redacted here\) \(3 times\)|^GET \/resources\/plans answered 500 with the Basic credentials \(base64\) in its body \(redacted here\); POST/,
    },
  },
  // The status port is wrong for the instance, and an unknown instance crashes the status route:
  // the crash page is its own fault (fixing the port would not fix it), shown under the failure it causes.
  {
    fault: "status-crash-unknown",
    fails: ["status.ready", "errors.explained"],
    warns: ["not-found.status", "errors.plain-text"],
    follows: { "not-found.status": "errors.explained", "errors.plain-text": "errors.explained" },
  },
];

describe("a broken provider (plain Express, one fault each)", () => {
  it.each(cases)(
    "$fault (variant $variant, $encoding): fails exactly $fails, warns $warns",
    async ({ fault, fails, warns = [], follows = {}, skips = {}, details = {}, passes = [], password = CREDENTIALS.password, provisionMs = PROVISION_MS, variant, encoding, leftovers = [] }) => {
      const credentials = { ...CREDENTIALS, password };
      await serving(referenceProvider({ ...credentials, provisionMs, readyAfterRefusedBind: true, fault }), async ({ url }) => {
        const cleanups: ProgressEvent[] = [];
        const report = await runConformance({
          url,
          ...credentials,
          ...FAST,
          variant,
          encoding,
          onProgress: (event) => event.type === "cleanup" && cleanups.push(event),
        });
        const named = (text: string) => text.replaceAll("{instance}", report.instance);
        expect(ids(report, "fail").sort()).toEqual([...fails].sort());
        expect(ids(report, "warn").sort()).toEqual([...warns].sort());
        const followers = Object.fromEntries(report.results.filter((result) => result.followsFrom).map((result) => [result.id, result.followsFrom]));
        expect(followers).toEqual(follows);
        for (const [id, reason] of Object.entries(skips)) expect(resultOf(report, id)).toMatchObject({ outcome: "skip", detail: named(reason) });
        for (const [id, detail] of Object.entries(details)) {
          if (typeof detail === "string") expect(resultOf(report, id).detail).toBe(named(detail));
          else expect(resultOf(report, id).detail).toMatch(detail);
        }
        for (const id of passes) expect(resultOf(report, id).outcome).toBe("pass");
        // Each failure and warning says what was sent and what came back, each answer once, and what to change.
        for (const id of [...fails, ...warns]) {
          const { detail, exchanges, advice } = resultOf(report, id);
          expect(detail).toBeTruthy();
          expect(advice).toBe(adviceLine(checkById(id)));
          expect(exchanges.length).toBeGreaterThan(0);
          if (id.startsWith("errors.") || id.startsWith("transport.")) {
            expect(new Set(exchanges.map(answerKey)).size).toBe(exchanges.length);
          }
        }
        expect(report.passed).toBe(fails.length === 0);
        // The run removes what it created, and only that: no cleanup of an instance it never created.
        expect(report.leftovers.map((leftover) => leftover.binding ?? leftover.instance)).toEqual(leftovers.map(named));
        expect(cleanups.every((event) => event.type === "cleanup" && event.removed)).toBe(true);
        // The status route tells whether the instance is gone, unless it, or the answer for an unknown instance, is the broken part.
        if (!fault.startsWith("status-") && fault !== "unknown-instance-500") expect(await statusOf(url, report.instance, credentials)).toBe(404);
      });
    },
  );

  it.each([
    ["numeric-env", "bind-app.env-strings", "change:   Make every value of the bind result a string (String(port), not port) (contract: Bind an app, docs/contract.md:56)"],
    ["update-405", "update.status", "change:   Answer PUT /resources/<instance> with 2xx (handlers.update), or 404 when updates are not supported; never 405 (contract: Update, docs/contract.md:70)"],
    ["status-200-empty", "status.text-body", "change:   Answer 204 when the instance is ready, or 200 with the status text as the body; never 200 with an empty body (contract: Status, docs/contract.md:50)"],
  ] as const)("a planted fault (%s) shows what to change for %s, in the text and the JSON report", async (fault, id, line) => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: PROVISION_MS, fault }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      expect(formatTree(report).split("\n").map((text) => text.trim())).toContain(line);
      const fromJson = (JSON.parse(formatJson(report)) as { results: Array<{ id: string; advice?: string }> }).results.find((result) => result.id === id);
      expect(`change:   ${fromJson?.advice}`).toBe(line);
      // Passing checks carry none: advice is for what to change.
      expect(report.results.filter((result) => result.outcome === "pass" && result.advice !== undefined)).toEqual([]);
    });
  });

  it("an instance the provider will not remove is retried on the given schedule, then named in the report with the destroy's answer", async () => {
    const destroys = new Map<string, number>();
    const counted = express();
    counted.use((req, _res, next) => {
      if (req.method === "DELETE" && /^\/resources\/[^/]+$/.test(req.path)) destroys.set(req.path, (destroys.get(req.path) ?? 0) + 1);
      next();
    });
    counted.use(referenceProvider({ ...CREDENTIALS, fault: "destroy-500" }));
    await serving(counted, async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST, cleanupRetryDelaysMs: [1, 1] });
      expect(ids(report, "fail")).toEqual(["destroy.status"]);
      // The second instance (isolation checks) could not be removed either.
      const other = `${report.instance}-2`;
      const reason = (instance: string) => `DELETE /resources/${instance} answered 500: Could not remove the instance: its disk is busy.`;
      // The newest first: the second instance was created after the first.
      expect(report.leftovers).toEqual([
        { instance: other, reason: reason(other), removeWith: `DELETE /resources/${other}` },
        { instance: report.instance, reason: reason(report.instance), removeWith: `DELETE /resources/${report.instance}` },
      ]);
      expect(formatTree(report)).toContain(`Could not remove ${report.instance} (${reason(report.instance)}): remove it with DELETE /resources/${report.instance}, or by hand.`);
      expect(JSON.parse(formatJson(report))).toMatchObject({ leftovers: [{ instance: other }, { instance: report.instance, reason: reason(report.instance) }] });
      expect(await statusOf(url, report.instance)).toBe(204);
      // Each: the run's own destroy, then the cleanup's first attempt and the two retries asked for.
      expect(destroys.get(`/resources/${report.instance}`)).toBe(4);
      expect(destroys.get(`/resources/${other}`)).toBe(4);
    });
  });

  it("one level per check, right for the era: the level shown is the catalog's whether the check passes or warns", async () => {
    // Both eras' clients read any answer but 200 on plans as "no plans".
    for (const variant of ["A", "current"] as const) expect(levelIn(checkById("plans.status"), variant)).toBe("SHOULD");
    for (const variant of ["A", "current"] as const) {
      const levels = (fault?: Fault) =>
        serving(referenceProvider({ ...CREDENTIALS, fault }), async ({ url }) => {
          const report = await runConformance({ url, ...CREDENTIALS, ...FAST, variant });
          for (const result of report.results) expect(result.level, result.id).toBe(levelIn(checkById(result.id), variant));
          return { report, tree: formatTree(report) };
        });
      const passing = await levels();
      const broken = await levels("flask-405s");
      // A 405 on plans and info warns, under the level the check has when it passes.
      expect(ids(broken.report, "warn")).toEqual(expect.arrayContaining(["plans.status", "info.status"]));
      expect(ids(broken.report, "fail")).not.toContain("plans.status");
      for (const id of ["plans.status", "info.status"]) {
        const line = (tree: string) => tree.split("\n").find((text) => text.includes(` ${id} `))!.replace(/^ {2}\S \S+ {2}/, "");
        expect(line(broken.tree)).toBe(line(passing.tree));
      }
    }
  });

  it("a 2xx on the unknown instance, or a wrong password let through, is not taken for a creation: nothing to remove", async () => {
    for (const fault of ["unbind-without-lookup", "no-auth", "bind-unknown-instance-200"] as const) {
      await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 0, fault }), async ({ url }) => {
        const cleanups: ProgressEvent[] = [];
        const report = await runConformance({ url, ...CREDENTIALS, ...FAST, onProgress: (event) => event.type === "cleanup" && cleanups.push(event) });
        // Both instances were removed by the run itself: the cleanup had nothing left to do.
        expect(cleanups).toEqual([]);
        expect(report.leftovers).toEqual([]);
        expect(formatTree(report)).not.toContain("Could not remove");
      });
    }
  });

  it("an instance created with an unknown plan is removed at the end", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, provisionMs: 0, fault: "unknown-plan-accepted" }), async ({ url }) => {
      const cleanups: string[] = [];
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST, onProgress: (event) => event.type === "cleanup" && cleanups.push(event.instance) });
      expect(cleanups).toEqual([`${report.instance}-plan`]);
      expect(report.leftovers).toEqual([]);
      expect(await statusOf(url, `${report.instance}-plan`)).toBe(404);
    });
  });

  it("the credentials two bindings share are named, never shown, in any report format", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "shared-credentials" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      expect(resultOf(report, "isolation.apps").outcome).toBe("warn");
      for (const text of [formatTree(report, { verbose: true }), formatJson(report), formatJunit(report)]) {
        expect(text).not.toContain(SHARED_PASSWORD);
        expect(text).toContain("REF_PASSWORD");
      }
    });
  });

  it("credentials an answer discloses are named with the exchange, never shown, in any report format", async () => {
    const password = "no-colons-here";
    await serving(referenceProvider({ ...CREDENTIALS, password, fault: "debug-page-on-colons" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, password, ...FAST });
      const disclosed = resultOf(report, "transport.no-secret");
      expect(disclosed.outcome).toBe("fail");
      expect(disclosed.exchanges.map((exchange) => exchange.response?.body).join("\n")).toContain("<redacted: the Basic credentials (base64)>");
      const probe = `${CREDENTIALS.username}:${password}:x`;
      const secrets = [password, Buffer.from(password).toString("base64"), Buffer.from(probe).toString("base64"), Buffer.from(`${CREDENTIALS.username}:${password}`).toString("base64")];
      for (const text of [formatTree(report, { verbose: true }), formatJson(report), formatJunit(report)]) {
        for (const secret of secrets) expect(text).not.toContain(secret);
        expect(text).toContain("transport.no-secret");
      }
    });
  });

  it("the skips of a failed create name the step that failed, and the bind checks do not fail", async () => {
    await serving(referenceProvider({ ...CREDENTIALS, fault: "create-500" }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      const bindChecks = report.results.filter((result) => result.group === "bind-app" || result.group === "bind-job");
      expect(bindChecks.length).toBeGreaterThan(0);
      expect(bindChecks.every((result) => result.outcome === "skip")).toBe(true);
      expect(resultOf(report, "create.status").detail).toBe("POST /resources answered 500, expected 2xx");
      // The not-found, auth and plans checks do not need an instance and still pass.
      expect(resultOf(report, "not-found.bind-app").outcome).toBe("pass");
      expect(resultOf(report, "auth.no-credentials").outcome).toBe("pass");
    });
  });
});
