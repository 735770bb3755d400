/**
 * The ACL journal against real servers: a shared server with an ACL file, killed with -9 before
 * it saved, and a registry server holding the journal.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino } from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryStore } from "provider-kit";
import { redisClient, type RedisClient } from "@provider-kit/redis-store/connection";
import { startRedisServer, type RedisServer } from "../../../test/support/redis-server.js";
import { AclJournal } from "../acl-journal.js";
import { eventually } from "./support.js";

const KEY = "_provider-kit:acl-journal";
const RULES = ["~cache:*", "+ping", "+set"];

describe("the ACL journal", () => {
  let dir: string;
  let aclFile: string;
  let shared: RedisServer;
  let registry: RedisServer;
  const clients: RedisClient[] = [];
  const journals: AclJournal[] = [];

  const connect = async (server: RedisServer, reconnect = false) => {
    const client = redisClient({ host: "127.0.0.1", port: server.port, password: "" }, { reconnect });
    await client.connect();
    clients.push(client);
    return client;
  };
  /** A journal as the provider builds one, with its background saves put off. */
  const journal = async (store = new MemoryStore()) => {
    const made = new AclJournal({
      admin: await connect(shared, true),
      registry: await connect(registry),
      key: KEY,
      store,
      saveIntervalMs: 600_000,
      log: pino({ level: "silent" }),
    });
    journals.push(made);
    return made;
  };
  const startShared = (port?: number) => startRedisServer({ port, args: ["--aclfile", aclFile] });
  /** kill -9, then the same server again on the same port and ACL file: what it had not saved is gone. */
  const crashShared = async () => {
    process.kill(shared.pid, "SIGKILL");
    await shared.stop();
    shared = await startShared(shared.port);
  };
  const accepts = async (user: string, password: string) => {
    const client = await connect(shared);
    return client.sendCommand(["AUTH", user, password]).then(
      () => true,
      () => false,
    );
  };
  const journalLength = async () => (await connect(registry)).xLen(KEY);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "acl-journal-"));
    aclFile = join(dir, "users.acl");
    await writeFile(aclFile, "");
    [shared, registry] = await Promise.all([startShared(), startRedisServer()]);
  });
  afterEach(async () => {
    await Promise.all(journals.splice(0).map((made) => made.close()));
    for (const client of clients.splice(0)) client.destroy();
    await Promise.all([shared?.stop(), registry?.stop()]);
    await rm(dir, { recursive: true, force: true });
  });

  it("makes again at the next start what a provider and its server both lost before saving", async () => {
    const before = await journal();
    await before.setUser("cache", "cache.app.web", "first-password", RULES);
    expect(await readFile(aclFile, "utf8")).not.toContain("cache.app.web");

    // The provider dies (its connections go, its journal is never closed, so never saved) and so does the server.
    for (const client of clients.splice(0)) client.destroy();
    await crashShared();
    expect(await accepts("cache.app.web", "first-password")).toBe(false);

    await (await journal()).start();
    expect(await accepts("cache.app.web", "first-password")).toBe(true);
    await eventually(async () => (await journalLength()) === 0, 20_000, "the journal emptied by a save");
    expect(await readFile(aclFile, "utf8")).toContain("cache.app.web");
  });

  it("makes an instance's lost users again on demand, so a status check right after a restart finds them", async () => {
    const after = await journal();
    await after.setUser("cache", "cache.health", "health-password", ["+ping"]);
    await after.setUser("other", "other.health", "other-password", ["+ping"]);
    await crashShared();
    await eventually(() => clients[0]!.isReady, 20_000, "the journal's connection back");
    // The connection back starts a replay of its own too: whichever runs, restoreLost resolves after it.
    await after.restoreLost("cache");
    expect(await accepts("cache.health", "health-password")).toBe(true);
    expect(await after.restoreLost("cache")).toBe(false); // made again on this process: nothing lost
    expect(await after.restoreLost("never-bound")).toBe(false);
  });

  it("removes from the journal only what a save on the same server process covered", async () => {
    const made = await journal();
    await made.setUser("cache", "cache.app.web", "a-password", RULES);
    await made.deleteUser("cache", "cache.app.web");
    expect(await journalLength()).toBe(2);
    await made.close(); // saves: both entries were made on the process that saved
    expect(await journalLength()).toBe(0);
    expect(await readFile(aclFile, "utf8")).not.toContain("cache.app.web");
  });

  it("saves once 500 changes wait, however long its interval, so no save blocks the server for a whole burst", async () => {
    const made = await journal(); // interval: 10 minutes
    for (let i = 0; i < 499; i++) await made.setUser("cache", `cache.app.a${i}`, "a-password", RULES);
    expect(await journalLength()).toBe(499);
    await made.setUser("cache", "cache.app.a499", "a-password", RULES);
    await eventually(async () => (await journalLength()) === 0, 20_000, "the journal emptied by a save");
    expect(await readFile(aclFile, "utf8")).toContain("cache.app.a499");
  });

  it("never undoes, when it replays, a change made on the instance after the server restarted", async () => {
    const store = new MemoryStore();
    const made = await journal(store);
    await made.setUser("cache", "cache.app.web", "old-password", RULES);

    // A bind holds the instance's lock across the crash: the replay the reconnection starts waits for it.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => (locked = resolve));
    const bind = store.withLock("cache", 10_000, async () => {
      locked();
      await held;
      await made.setUser("cache", "cache.app.web", "new-password", RULES);
    });
    await lockTaken;
    await crashShared();
    await eventually(() => clients[0]!.isReady, 20_000, "the journal's connection back");
    release();
    await bind;

    await eventually(async () => (await journalLength()) === 0, 20_000, "the replay saved");
    expect(await accepts("cache.app.web", "new-password")).toBe(true);
    expect(await accepts("cache.app.web", "old-password")).toBe(false);
  });

  it("removes every user of a destroyed instance again when the server lost the removal", async () => {
    const made = await journal();
    await made.setUser("cache", "cache.health", "health-password", ["+ping"]);
    await made.setUser("cache", "cache.app.web", "app-password", RULES);
    await made.close();
    const after = await journal();
    await after.deleteInstanceUsers("cache");
    // The saved file still has the users the crash brings back (the replay may remove them again
    // before the server could be asked, on a loaded machine).
    expect(await readFile(aclFile, "utf8")).toContain("user cache.app.web ");
    await crashShared();

    await eventually(async () => !(await accepts("cache.app.web", "app-password")) && !(await accepts("cache.health", "health-password")));
    await eventually(async () => (await journalLength()) === 0, 20_000, "the replay saved");
  });
});
