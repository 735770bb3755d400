/**
 * The actions checks: the kit calls each operation of a service manifest on the instance it
 * created. A createProvider provider with actions passes; each fault provider is that provider
 * with one action broken in front of it, and the kit's verdicts are exact.
 */
import express, { type RequestHandler } from "express";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { actionsManifest, BadRequestError, createProvider, declareActions, instanceAction, MemoryStore, z, type ProviderHandlers } from "provider-kit";
import { ConformanceUsageError, runConformance, type ActionsManifest } from "../../src/conformance/index.js";
import { CREDENTIALS, FAST, ids, resultOf, serving } from "./helpers.js";

const actions = declareActions({
  rotate: instanceAction({
    name: "apps.rotate-password",
    method: "POST",
    path: "/apps/:app/rotate-password",
    lock: true,
    body: z.object({ length: z.coerce.number().int().min(16).default(32) }),
  }),
  flush: instanceAction({ name: "flush", method: "POST", path: "/flush", lock: true }),
  memory: instanceAction({ name: "memory", method: "GET", path: "/memory", lock: false }),
});
const MANIFEST = actionsManifest(actions);

/** Instances and bindings in memory; rotate-password knows only bound apps, as a real one would. */
function handlers(): ProviderHandlers {
  const bound = new Set<string>();
  const key = (instance: string, app: string) => `${instance}\0${app}`;
  return {
    plans: () => [{ name: "small", description: "A small in-memory thing" }],
    create: (request) => {
      if (request.plan && request.plan !== "small") throw new BadRequestError(`Unknown plan "${request.plan}": the only plan is small.`);
    },
    update: () => {},
    destroy: () => {},
    bindApp: (request) => {
      bound.add(key(request.instance, request.appName ?? ""));
      return { THING_APP: request.appName ?? "", THING_PASSWORD: randomBytes(12).toString("base64url") };
    },
    unbindApp: (request) => void bound.delete(key(request.instance, request.appName ?? "")),
    bindUnit: () => {},
    unbindUnit: () => {},
    bindJob: (request) => ({ THING_JOB: request.jobName }),
    unbindJob: () => {},
    info: () => [{ label: "Size", value: "small" }],
    actions: actions.implement({
      rotate: ({ instance, params, body }) => {
        if (!bound.has(key(instance, params.app))) throw new BadRequestError(`App "${params.app}" is not bound.`);
        return { THING_PASSWORD: "x".repeat(body.length) };
      },
      flush: () => ({ removedKeys: 0 }),
      memory: () => ({ usedBytes: 0 }),
    }),
  };
}

/** The provider, behind `front` (routes of a fault, tried first). */
function providerApp(front?: (app: express.Express) => void): express.Express {
  const provider = createProvider(handlers(), {
    auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password },
    registry: { store: new MemoryStore() },
    logger: pino({ level: "silent" }),
  });
  const app = express();
  front?.(app);
  app.use((req, res) => provider.requestListener(req, res));
  return app;
}

/** The service's Basic credentials, as the provider checks them, for fault routes that keep auth. */
const withServiceAuth: RequestHandler = (req, res, next) => {
  const expected = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
  if (req.headers.authorization === expected) next();
  else res.status(401).type("text").send("Send the service's credentials.");
};
const flushWithoutAuth: RequestHandler = (_req, res) => void res.json({ removedKeys: 0 });
/** Parses the body itself and lets the parse error reach Express's default handler: a crash page. */
const flushCrashingOnBadBody: RequestHandler = (req, res) => {
  const text = typeof req.body === "string" ? req.body : "";
  if (text !== "") JSON.parse(text);
  res.json({ removedKeys: 0 });
};
const FLUSH = "/resources/:instance/flush";

async function run(app: express.Express, manifest: ActionsManifest | undefined) {
  return serving(app, ({ url }) => runConformance({ url, ...CREDENTIALS, ...FAST, manifest }));
}

const followers = (report: Awaited<ReturnType<typeof run>>) =>
  Object.fromEntries(report.results.filter((result) => result.followsFrom).map((result) => [result.id, result.followsFrom]));

describe("the actions checks", () => {
  it("pass for a provider serving its manifest's actions", async () => {
    const report = await run(providerApp(), MANIFEST);
    expect(report.results.filter((result) => result.outcome === "fail" || result.outcome === "warn").map((result) => `${result.id}: ${result.detail}`)).toEqual([]);
    expect(report.results.filter((result) => result.group === "actions").map((result) => [result.id, result.outcome])).toEqual([
      ["actions.exists", "pass"],
      ["actions.auth", "pass"],
      ["actions.no-405", "pass"],
      ["actions.bad-input", "pass"],
    ]);
    expect(resultOf(report, "actions.exists").detail).toBe("3 operation(s) served");
    // The rotated password never reaches the report.
    expect(JSON.stringify(report)).not.toContain("x".repeat(32));
  });

  it("are skipped without a manifest, saying how to give one", async () => {
    const report = await run(providerApp(), undefined);
    for (const id of ["actions.exists", "actions.auth", "actions.no-405", "actions.bad-input"]) {
      expect(resultOf(report, id)).toMatchObject({
        outcome: "skip",
        detail: "no service manifest given: pass it (--manifest <file>, or manifest in the options) to check the provider's actions",
      });
    }
    expect(report.passed).toBe(true);
  });

  it("fail an operation the manifest declares and the provider does not serve", async () => {
    const manifest = { ...MANIFEST, operations: [...MANIFEST.operations, { method: "POST" as const, path: "/reindex", action: "reindex" }] };
    const report = await run(providerApp(), manifest);
    expect(ids(report, "fail")).toEqual(["actions.exists"]);
    expect(ids(report, "warn")).toEqual([]);
    expect(resultOf(report, "actions.exists").detail).toBe(
      `POST /resources/${report.instance}/reindex (action "reindex") answered 404: the platform forwards what the manifest declares; serve it, or remove it from the manifest`,
    );
    // Its bad input is not judged: the operation is not there.
    expect(resultOf(report, "actions.bad-input").outcome).toBe("pass");
  });

  it("fail an action that answers without the service's credentials", async () => {
    const report = await run(providerApp((app) => app.post(FLUSH, flushWithoutAuth)), MANIFEST);
    expect(ids(report, "fail")).toEqual(["actions.auth"]);
    expect(ids(report, "warn")).toEqual([]);
    expect(resultOf(report, "actions.auth").detail).toBe(
      `POST /resources/${report.instance}/flush without credentials answered 200: refuse it with 401, as every call`,
    );
  });

  it("fail a path answering 405 to a method it does not serve; the no-405 rule follows from it", async () => {
    const report = await run(providerApp((app) => app.all(FLUSH, withServiceAuth, (req, res, next) => (req.method === "POST" ? next() : void res.status(405).type("text").send("Method Not Allowed")))), MANIFEST);
    expect(ids(report, "fail")).toEqual(["actions.no-405", "transport.no-405"]);
    expect(ids(report, "warn")).toEqual([]);
    expect(followers(report)).toEqual({ "transport.no-405": "actions.no-405" });
    expect(resultOf(report, "actions.no-405").detail).toBe(
      `PATCH /resources/${report.instance}/flush answered 405: answer 404 for a method the path does not serve`,
    );
  });

  it("fail an action that crashes on a malformed body; the error checks follow from it", async () => {
    const report = await run(providerApp((app) => app.post(FLUSH, withServiceAuth, express.text({ type: "*/*" }), flushCrashingOnBadBody)), MANIFEST);
    expect(ids(report, "fail")).toEqual(["actions.bad-input", "errors.explained"]);
    expect(ids(report, "warn")).toEqual(["errors.plain-text"]);
    expect(followers(report)).toEqual({ "errors.explained": "actions.bad-input", "errors.plain-text": "actions.bad-input" });
    expect(resultOf(report, "actions.bad-input").detail).toMatch(
      new RegExp(`^POST /resources/${report.instance}/flush with a malformed JSON body answered 500 with an HTML page .*: refuse input the action cannot read with 400 and a sentence saying what to send$`),
    );
  });

  it("fail an action that throws on the call the platform's proxy sends (500, empty body)", async () => {
    const report = await run(providerApp((app) => app.post(FLUSH, withServiceAuth, (_req, res) => void res.status(500).end())), MANIFEST);
    expect(report.passed).toBe(false);
    expect(resultOf(report, "actions.exists").detail).toBe(
      `POST /resources/${report.instance}/flush (action "flush") answered 500 with an empty body to the call the platform's proxy sends (no body): ` +
        "the action fails; find why in the provider's log, and refuse a call it cannot serve with a 4xx saying what to send",
    );
    expect(ids(report, "fail")).toEqual(["actions.exists", "actions.bad-input", "errors.explained"]);
    expect(followers(report)).toEqual({ "errors.explained": "actions.exists" });
  });

  it("refuse a manifest the platform would not take, saying which operation and why", async () => {
    const manifest = { ...MANIFEST, operations: [{ method: "POST", path: "flush", action: "flush" }] } as unknown as ActionsManifest;
    await expect(runConformance({ url: "http://127.0.0.1:1", ...CREDENTIALS, manifest })).rejects.toThrow(
      new ConformanceUsageError(`The manifest's operation 1 has path "flush": give a path under the instance, such as /users/{user}/keys.`),
    );
  });
});
