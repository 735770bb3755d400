/**
 * Custom actions, over real HTTP: served under the instance and under /authenticated-resources
 * with the contract's auth, validation, error answers, logging and instance lock; refused at
 * start-up when the provider could not serve them unambiguously.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { INSTANCE_SUBPATHS } from "../../src/contract.js";
import {
  actionsManifest,
  ConfigurationError,
  createProvider,
  declareActions,
  instanceAction,
  MemoryStore,
  NotFoundError,
  serviceAction,
  type ActionDeclaration,
  type LockOptions,
  type CallPlacement,
  type LockedInstance,
  type ProviderActions,
  type ProviderHandlers,
} from "../../src/index.js";
import { AUTH, FORM, GOOD_AUTH, requestLines, start, stopAll, type Running } from "../../../../test/support/fake-provider.js";

afterEach(stopAll);

/** A promise the test opens when it chooses: how handlers wait without sleeping. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

/** A memory store that says when a call asks for an instance lock. */
class WatchedStore extends MemoryStore {
  onLockRequest: (() => void) | undefined;

  override withLock<T>(instance: string, waitMs: number, work: (locked: LockedInstance) => Promise<T>, options?: LockOptions): Promise<T> {
    this.onLockRequest?.();
    return super.withLock(instance, waitMs, work, options);
  }
}

const CONTRACT: Pick<ProviderHandlers, "create" | "destroy" | "bindApp" | "unbindApp"> = {
  create: async () => {},
  destroy: async () => {},
  bindApp: async () => ({}),
  unbindApp: async () => {},
};

const actions = declareActions({
  rotatePassword: instanceAction({
    name: "apps.rotate-password",
    method: "POST",
    path: "/apps/:app/rotate-password",
    lock: true,
    body: z.object({ length: z.coerce.number().int().min(16) }),
  }),
  memory: instanceAction({
    name: "memory",
    method: "GET",
    path: "/memory",
    lock: false,
    query: z.object({ unit: z.enum(["bytes", "mb"]).default("bytes") }),
  }),
  flush: instanceAction({ name: "flush", method: "POST", path: "/flush", lock: true }),
  anyUser: instanceAction({ name: "users.read", method: "GET", path: "/users/:user", lock: false }),
  me: instanceAction({ name: "users.me", method: "GET", path: "/users/me", lock: false }),
  regions: serviceAction({ name: "regions", method: "GET", path: "/regions", query: z.object({ near: z.string().optional() }) }),
  feedback: serviceAction({ name: "feedback", method: "POST", path: "/feedback", body: z.object({ text: z.string().min(1) }) }),
});

interface Noted {
  action: string;
  request: unknown;
  user?: string;
  placement: CallPlacement;
  data?: unknown;
}

/** A provider whose actions note what they got; `flush` and `memory` run `during`. */
async function serving(options: { registry?: boolean; store?: MemoryStore; flush?: () => Promise<void>; memory?: () => unknown } = {}) {
  const noted: Noted[] = [];
  const implemented = actions.implement({
    rotatePassword: async (request, ctx) => {
      noted.push({ action: "rotatePassword", request, user: ctx.user, placement: ctx.placement, data: ctx.record?.data });
      ctx.keepData({ rotations: Number(ctx.record?.data.rotations ?? 0) + 1 });
      if (request.params.app === "broken") throw new Error("the resource refused");
      return { app: request.params.app, length: request.body.length };
    },
    memory: async (request, ctx) => {
      noted.push({ action: "memory", request, placement: ctx.placement, data: ctx.record?.data });
      return options.memory ? options.memory() : { used: 1024, unit: request.query.unit };
    },
    flush: async (request, ctx) => {
      noted.push({ action: "flush", request, placement: ctx.placement });
      await options.flush?.();
    },
    anyUser: async ({ params }) => {
      if (params.user === "ghost") throw new NotFoundError(`No user "${params.user}" on this instance.`);
      return { user: params.user };
    },
    me: async () => ({ me: true }),
    regions: async (request, ctx) => {
      noted.push({ action: "regions", request, user: ctx.user, placement: ctx.placement });
      return ["east", "west"];
    },
    feedback: async (request, ctx) => {
      noted.push({ action: "feedback", request, user: ctx.user, placement: ctx.placement });
    },
  });
  const registry = options.registry === false ? false : { store: options.store ?? new MemoryStore() };
  const running = await start({ ...CONTRACT, actions: implemented }, { registry });
  return { running, noted };
}

function call(running: Running, method: "get" | "post" | "put" | "delete", target: string) {
  return running.http[method](target).set("Authorization", GOOD_AUTH);
}

async function createInstance(running: Running, name = "db1"): Promise<void> {
  await call(running, "post", "/resources").type(FORM).send({ name }).expect(201);
}

describe("instance actions", () => {
  it("get the instance, the path's parameters and the body as the schema reads it; answer 200 JSON", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    const form = await call(running, "post", "/resources/db1/apps/web/rotate-password").set("X-Tsuru-User", "ana@example.com").type(FORM).send("length=24");
    expect(form.status).toBe(200);
    expect(form.body).toEqual({ app: "web", length: 24 });
    const json = await call(running, "post", "/resources/db1/apps/api/rotate-password").send({ length: 32 }).expect(200);
    expect(json.body).toEqual({ app: "api", length: 32 });
    expect(noted[0]).toMatchObject({ request: { instance: "db1", params: { app: "web" }, body: { length: 24 }, query: {} }, user: "ana@example.com" });
  });

  it("read the query string with their query schema", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    expect((await call(running, "get", "/resources/db1/memory?unit=mb").expect(200)).body).toEqual({ used: 1024, unit: "mb" });
    expect((await call(running, "get", "/resources/db1/memory").expect(200)).body).toEqual({ used: 1024, unit: "bytes" });
    expect(noted.map((each) => each.request)).toEqual([
      { instance: "db1", params: {}, body: {}, query: { unit: "mb" } },
      { instance: "db1", params: {}, body: {}, query: { unit: "bytes" } },
    ]);
  });

  it("answer 204 when the handler returns nothing", async () => {
    const { running } = await serving();
    await createInstance(running);
    const res = await call(running, "post", "/resources/db1/flush").expect(204);
    expect(res.text).toBe("");
  });

  it("log one request line with the route's pattern and the action's name", async () => {
    const { running } = await serving();
    await createInstance(running);
    await call(running, "post", "/resources/db1/flush").set("X-Tsuru-User", "ana@example.com").expect(204);
    expect(requestLines(running.logs).at(-1)).toMatchObject({
      method: "POST",
      path: "/resources/db1/flush",
      route: "/resources/:instance/flush",
      action: "flush",
      instance: "db1",
      user: "ana@example.com",
      status: 204,
    });
  });

  it("answer 400 naming the field for a body the schema refuses, in a form and in JSON, before the handler runs", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    const form = await call(running, "post", "/resources/db1/apps/web/rotate-password").type(FORM).send("length=8").expect(400);
    expect(form.text).toMatch(/^Field "length": /);
    expect(form.headers["content-type"]).toBe("text/plain; charset=utf-8");
    const json = await call(running, "post", "/resources/db1/apps/web/rotate-password").send({ length: "many" }).expect(400);
    expect(json.text).toMatch(/^Field "length": /);
    const none = await call(running, "post", "/resources/db1/apps/web/rotate-password").expect(400);
    expect(none.text).toMatch(/^Field "length": /);
    expect(noted).toEqual([]);
  });

  it("answer 400 naming the query parameter the schema refuses", async () => {
    const { running } = await serving();
    await createInstance(running);
    const res = await call(running, "get", "/resources/db1/memory?unit=tons").expect(400);
    expect(res.text).toMatch(/^Query parameter "unit": /);
  });

  it("answer 400 for an instance name the contract refuses, as other routes do", async () => {
    const { running } = await serving();
    const res = await call(running, "post", "/resources/1db/flush").expect(400);
    expect(res.text).toMatch(/^The instance name in the path must start with a letter/);
  });

  it("answer 401 without the service's credentials, and never run", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    const res = await running.http.post("/resources/db1/flush").expect(401);
    expect(res.headers["www-authenticate"]).toMatch(/^Basic realm=/);
    expect(noted).toEqual([]);
  });

  it("answer the registry's 404 for an unknown instance", async () => {
    const { running, noted } = await serving();
    for (const [method, target] of [["post", "/resources/nope/flush"], ["get", "/resources/nope/memory"]] as const) {
      const res = await call(running, method, target).expect(404);
      expect(res.text).toBe('Instance "nope" not found.');
    }
    expect(noted).toEqual([]);
  });

  it("answer 412 on an instance still provisioning, as binds do", async () => {
    const provisioned = gate();
    const noted: string[] = [];
    const running = await start(
      {
        ...CONTRACT,
        create: async () => ({ pending: true }),
        provision: () => provisioned.opened,
        actions: actions.implement({
          rotatePassword: async () => void noted.push("rotatePassword"),
          memory: async () => void noted.push("memory"),
          flush: async () => void noted.push("flush"),
          anyUser: async () => {},
          me: async () => {},
          regions: async () => [],
          feedback: async () => {},
        }),
      },
      { registry: { store: new MemoryStore() } },
    );
    await createInstance(running);
    for (const [method, target] of [["post", "/resources/db1/flush"], ["get", "/resources/db1/memory"]] as const) {
      const res = await call(running, method, target).expect(412);
      expect(res.text).toBe('Instance "db1" is still being provisioned; try again in a moment.');
    }
    expect(noted).toEqual([]);
    provisioned.open();
  });

  it("that change the instance run one at a time: a second call waits for the lock the first holds", async () => {
    const store = new WatchedStore();
    const events: string[] = [];
    const entered = gate();
    const release = gate();
    let calls = 0;
    const { running } = await serving({
      store,
      flush: async () => {
        const which = ++calls === 1 ? "first" : "second";
        events.push(`${which} in`);
        if (which === "first") {
          entered.open();
          await release.opened;
        }
        events.push(`${which} out`);
      },
    });
    await createInstance(running);
    const first = call(running, "post", "/resources/db1/flush").then((res) => res.status);
    await entered.opened;
    const secondAsked = gate();
    store.onLockRequest = secondAsked.open;
    const second = call(running, "post", "/resources/db1/flush").then((res) => res.status);
    await secondAsked.opened;
    expect(events).toEqual(["first in"]); // the second asked for the lock and did not get it
    release.open();
    expect(await Promise.all([first, second])).toEqual([204, 204]);
    expect(events).toEqual(["first in", "first out", "second in", "second out"]);
  });

  it("that only read run at once, while a changing action holds the lock", async () => {
    const events: string[] = [];
    const entered = gate();
    const release = gate();
    const { running } = await serving({
      flush: async () => {
        events.push("flush in");
        entered.open();
        await release.opened;
        events.push("flush out");
      },
      memory: () => ({ seen: [...events] }),
    });
    await createInstance(running);
    const flushing = call(running, "post", "/resources/db1/flush").then((res) => res.status);
    await entered.opened;
    const read = await call(running, "get", "/resources/db1/memory").expect(200);
    expect(read.body).toEqual({ seen: ["flush in"] });
    release.open();
    expect(await flushing).toBe(204);
  });

  it("that change the instance keep data on its record, only when they succeed", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    await call(running, "post", "/resources/db1/apps/web/rotate-password").send({ length: 16 }).expect(200);
    await call(running, "post", "/resources/db1/apps/broken/rotate-password").send({ length: 16 }).expect(500);
    await call(running, "get", "/resources/db1/memory").expect(200);
    expect(noted.map(({ action, data }) => [action, data])).toEqual([
      ["rotatePassword", {}],
      ["rotatePassword", { rotations: 1 }],
      ["memory", { rotations: 1 }],
    ]);
  });

  it("cannot keep data without the registry: 500, with the reason in the log only", async () => {
    const { running } = await serving({ registry: false });
    const res = await call(running, "post", "/resources/db1/apps/web/rotate-password").send({ length: 16 }).expect(500);
    expect(res.text).toMatch(/^The provider failed to handle this call/);
    expect(running.logText()).toContain("the registry is off (registry: false)");
  });

  it("answer what the handler throws, as every route does", async () => {
    const { running } = await serving();
    await createInstance(running);
    const res = await call(running, "get", "/resources/db1/users/ghost").expect(404);
    expect(res.text).toBe('No user "ghost" on this instance.');
  });

  it("try a more specific pattern first, whatever the declaration order", async () => {
    const { running } = await serving();
    await createInstance(running);
    expect((await call(running, "get", "/resources/db1/users/me").expect(200)).body).toEqual({ me: true });
    expect((await call(running, "get", "/resources/db1/users/ana").expect(200)).body).toEqual({ user: "ana" });
  });

  it("get the call's placement from the headers", async () => {
    const { running, noted } = await serving();
    await createInstance(running);
    await call(running, "post", "/resources/db1/flush").set("X-Tsuru-Pool-Name", "blue").set("X-Tsuru-Cluster-Name", "east").expect(204);
    expect(noted.at(-1)?.placement).toEqual({ poolName: "blue", clusterName: "east", clusterAddresses: [] });
  });

  it("leave the contract's routes as they were", async () => {
    const { running } = await serving();
    await createInstance(running);
    await call(running, "get", "/resources/db1/status").expect(204);
    await call(running, "post", "/resources/db1/unknown").expect(404);
  });
});

describe("service actions", () => {
  it("are served under /authenticated-resources, with the query and the body their schemas read", async () => {
    const { running, noted } = await serving();
    const regions = await call(running, "get", "/authenticated-resources/regions?near=lisbon").set("X-Tsuru-Pool-Name", "blue").expect(200);
    expect(regions.body).toEqual(["east", "west"]);
    await call(running, "post", "/authenticated-resources/feedback").set("X-Tsuru-User", "ana@example.com").type(FORM).send("text=thanks").expect(204);
    expect(noted).toEqual([
      { action: "regions", request: { params: {}, body: {}, query: { near: "lisbon" } }, user: undefined, placement: { poolName: "blue", clusterAddresses: [] } },
      { action: "feedback", request: { params: {}, body: { text: "thanks" }, query: {} }, user: "ana@example.com", placement: { clusterAddresses: [] } },
    ]);
    expect(requestLines(running.logs).at(-1)).toMatchObject({ route: "/authenticated-resources/feedback", action: "feedback", status: 204 });
  });

  it("take the caller from the platform's header only, never from a body field", async () => {
    const { running, noted } = await serving();
    await call(running, "post", "/authenticated-resources/feedback").type(FORM).send("text=hi&user=mallory@example.com").expect(204);
    expect(noted.at(-1)?.user).toBeUndefined();
  });

  it("answer 400 naming the field, and 401 without credentials", async () => {
    const { running } = await serving();
    const bad = await call(running, "post", "/authenticated-resources/feedback").send({ text: "" }).expect(400);
    expect(bad.text).toMatch(/^Field "text": /);
    await running.http.get("/authenticated-resources/regions").expect(401);
  });
});

describe("declarations the provider could not serve are refused", () => {
  const provide = (declarations: Record<string, ActionDeclaration>) => {
    const declared = declareActions(declarations);
    const handlers = Object.fromEntries(Object.keys(declarations).map((key) => [key, async () => {}]));
    return createProvider({ ...CONTRACT, actions: declared.implement(handlers) }, { auth: AUTH, registry: false, logger: pino({ level: "silent" }) });
  };
  const refused = (declarations: Record<string, ActionDeclaration>) => {
    try {
      provide(declarations);
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigurationError);
      return (error as Error).message;
    }
    throw new Error("not refused");
  };
  const flush = (path: string, method: ActionDeclaration["method"] = "POST") => instanceAction({ name: "flush", method, path, lock: true });

  it.each(INSTANCE_SUBPATHS)("a path the contract has under the instance (%s), whatever the method", (contract) => {
    expect(refused({ clash: flush(contract, "GET") })).toMatch(`overlaps the contract's /resources/<instance>${contract}`);
  });

  it.each(["/:what", "/hostname/:anything", "/binds/:kind/:name", "/:a/jobs/:b"])("a pattern that overlaps the contract's (%s), saying what to change", (pattern) => {
    expect(refused({ clash: flush(pattern) })).toMatch(/overlaps the contract's .* start it with a literal segment of your own\.$/);
  });

  it("two actions that would answer the same calls", async () => {
    expect(refused({ a: flush("/x/:id"), b: instanceAction({ name: "b", method: "POST", path: "/x/:key", lock: false }) })).toMatch(
      /would answer the same calls: change one path, or make one more specific/,
    );
    expect(refused({ a: flush("/x/:id/y"), b: instanceAction({ name: "b", method: "POST", path: "/x/z/:key", lock: false }) })).toMatch(
      /would answer the same calls/,
    );
    // Another method, another kind, or one more specific than the other: all fine.
    const fine = {
      a: flush("/x/:id"),
      b: instanceAction({ name: "b", method: "GET", path: "/x/:key", lock: false }),
      c: instanceAction({ name: "c", method: "POST", path: "/x/all", lock: true }),
      d: serviceAction({ name: "d", method: "POST", path: "/x/:id" }),
    };
    await provide(fine).close();
  });

  it("bad names, methods and paths, and a name used twice", () => {
    expect(refused({ a: instanceAction({ name: "Rotate_Password", method: "POST", path: "/rotate", lock: true }) })).toMatch(
      /^Action "a" \(Rotate_Password\): its name must be lower-case letters/,
    );
    expect(refused({ a: instanceAction({ name: "a", method: "HEAD" as "GET", path: "/a", lock: true }) })).toMatch(/its method must be one of GET, POST, PUT, PATCH, DELETE/);
    for (const bad of ["", "/", "rotate", "/rotate/", "/a//b", "/../a", "/a b", "/:", "/:1st", "/{id}"]) {
      expect(refused({ a: flush(bad) }), bad).toMatch(/its path .* must start with "\/"/);
    }
    expect(refused({ a: flush("/users/:id/keys/:id") })).toMatch(/names a parameter twice/);
    expect(refused({ a: flush("/resources/:instance/x") })).toMatch(/":instance", which is the instance's own: use request\.instance/);
    expect(refused({ a: flush("/a"), b: serviceAction({ name: "flush", method: "GET", path: "/b" }) })).toMatch(/names must be unique/);
  });

  it("an instance action that does not say whether it changes the instance", () => {
    const unsaid = { ...flush("/a"), lock: undefined } as unknown as ActionDeclaration;
    expect(refused({ a: unsaid })).toMatch(/lock: true \(runs holding the instance lock\) or lock: false/);
  });

  it("handlers missing for declared actions, or given for undeclared ones", () => {
    const declared = declareActions({ a: flush("/a") });
    expect(() => declared.implement({} as never)).toThrow(/missing: a\./);
    expect(() => declared.implement({ a: async () => {}, b: async () => {} } as never)).toThrow(/not declared: b\./);
    const handBuilt: ProviderActions = { declarations: { a: flush("/a") }, handlers: {} };
    expect(() => createProvider({ ...CONTRACT, actions: handBuilt }, { auth: AUTH, registry: false })).toThrow(/action "a" has no handler/);
  });

  it("the reserved paths are exactly the contract's routes under an instance, as docs/reference/routes.md lists them", () => {
    // That table is checked against the routes a provider serves (test/docs/reference.test.ts).
    const doc = readFileSync(path.resolve(import.meta.dirname, "../../../../docs/reference/routes.md"), "utf8");
    const documented = [...doc.matchAll(/^\| [A-Z]+ \| `\/resources\/:name(\/[^`]+)` \| (?:A|B|current)/gm)].map((match) => match[1]!);
    expect(new Set(documented)).toEqual(new Set(INSTANCE_SUBPATHS));
  });
});

describe("actionsManifest", () => {
  it("is the platform's service manifest of the instance actions, written from the declarations", () => {
    expect(actionsManifest(actions)).toEqual({
      enabled: true,
      strict_actions: true,
      legacy_compat: false,
      operations: [
        { method: "POST", path: "/apps/{app}/rotate-password", action: "apps.rotate-password" },
        { method: "GET", path: "/memory", action: "memory" },
        { method: "POST", path: "/flush", action: "flush" },
        { method: "GET", path: "/users/{user}", action: "users.read" },
        { method: "GET", path: "/users/me", action: "users.me" },
      ],
    });
  });

  it("takes the platform's two switches, and the implemented actions as well as the declared ones", () => {
    const implemented = actions.implement({
      rotatePassword: () => {},
      memory: () => {},
      flush: () => {},
      anyUser: () => {},
      me: () => {},
      regions: () => {},
      feedback: () => {},
    });
    expect(actionsManifest(implemented, { strictActions: false, legacyCompat: true })).toMatchObject({ strict_actions: false, legacy_compat: true });
  });

  it("refuses declarations the provider would refuse", () => {
    const clash = { declarations: { a: instanceAction({ name: "a", method: "GET", path: "/status", lock: false }) } };
    expect(() => actionsManifest(clash)).toThrow(ConfigurationError);
  });
});
