/**
 * Plan `shared` under attack: a bound app tries, against a real redis-server, what would crash,
 * freeze or spy on the server every tenant shares. Each attack must be refused, and the other
 * tenants, and the provider's answers about them, must carry on.
 */
import { Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REDIS_BROKER } from "../broker.js";
import { appClient, bindEnv, broker, eventually, failure, startSharedSetup, type SharedSetup } from "./support.js";

/** Keyless commands an app may run: each concerns only its own connection, or is static. */
const REVIEWED_KEYLESS = [
  "auth",
  "client|getname",
  "client|id",
  "client|info",
  "client|reply",
  "client|setname",
  "command|count",
  "command|docs",
  "command|getkeys",
  "command|getkeysandflags",
  "command|help",
  "command|info",
  "command|list",
  "discard",
  "echo",
  "exec",
  "hello",
  "multi",
  "object|help",
  "ping",
  "psubscribe", // channels: filtered by the ACL channel pattern
  "publish",
  "punsubscribe",
  "quit",
  "reset",
  "subscribe",
  "time",
  "unsubscribe",
  "unwatch",
  "xgroup|help",
  "xinfo|help",
];

/** COMMAND INFO's reply for one command: [name, arity, flags, first key, last key, step, categories, tips, key specs, subcommands]. */
type CommandInfo = [string, number, string[], number, number, number, string[], unknown[], unknown[], CommandInfo[]];

describe("plan shared under attack", () => {
  let setup: SharedSetup;
  let api: SharedSetup["api"];
  let admin: SharedSetup["admin"];
  let attackerEnv: Record<string, string>;
  let attacker: Awaited<ReturnType<SharedSetup["connect"]>>;
  let victim: Awaited<ReturnType<SharedSetup["connect"]>>;

  beforeAll(async () => {
    setup = await startSharedSetup("shared-attacks");
    ({ api, admin } = setup);
    await api.create("attacker", "shared");
    await api.create("victim", "shared");
    attackerEnv = bindEnv(await api.bindApp("attacker", "evil"));
    attacker = await setup.connect(attackerEnv);
    victim = await setup.connect(bindEnv(await api.bindApp("victim", "shop")));
    await victim.set("victim:cart", "3 items");
  });

  afterAll(() => setup?.stop());

  /**
   * The app's ACL refuses `command`, and running it fails. (Redis checks some commands, such as
   * DEBUG, against its own settings first, so the refusal is asked of the ACL with DRYRUN.)
   */
  const expectRefused = async (command: string[]) => {
    const verdict = await admin.sendCommand<string>(["ACL", "DRYRUN", attackerEnv.REDIS_USER!, ...command]);
    expect(verdict, command.join(" ")).toMatch(/no permissions to run/);
    expect(await failure(attacker.sendCommand(command)), command.join(" ")).not.toMatch(/^OK/);
  };

  /** The other tenant still works, and the provider still answers for it. */
  const victimUnharmed = async () => {
    expect(await victim.get("victim:cart")).toBe("3 items");
    expect((await api.status("victim")).status).toBe(204);
  };

  it("denies scripting, functions and the Lua debugger", async () => {
    const library = "#!lua name=evil\nredis.register_function('spin', function() while true do end end)";
    for (const command of [
      // Redis 7.0 crashes (SIGSEGV) on an EVAL whose redis.call fails in the sync-mode debugger.
      ["SCRIPT", "DEBUG", "SYNC"],
      ["EVAL", "return redis.call('GET', 'victim:cart')", "0"],
      ["EVAL", "while true do end", "0"], // would answer BUSY to every tenant
      ["EVAL_RO", "return 1", "0"],
      ["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
      ["EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"],
      ["SCRIPT", "LOAD", "return 1"],
      ["SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"], // probes other tenants' scripts
      ["SCRIPT", "FLUSH"],
      ["SCRIPT", "KILL"],
      ["FUNCTION", "LOAD", library],
      ["FUNCTION", "LIST"],
      ["FUNCTION", "STATS"],
      ["FUNCTION", "DUMP"],
      ["FCALL", "spin", "0"],
      ["FCALL_RO", "spin", "0"],
      ["DEBUG", "SLEEP", "5"],
      ["DEBUG", "SEGFAULT"],
    ]) {
      await expectRefused(command);
    }
    await victimUnharmed();
  });

  it("denies every command that shows the server beyond the app's own keys", async () => {
    await attacker.set("attacker:mine", "x");
    for (const command of [
      ["MEMORY", "STATS"], // total key count, other tenants' memory
      ["MEMORY", "MALLOC-STATS"],
      ["MEMORY", "DOCTOR"],
      ["MEMORY", "PURGE"],
      ["INFO"],
      ["INFO", "keyspace"],
      ["CONFIG", "GET", "maxmemory"],
      ["CLIENT", "LIST"], // every tenant's address, user and last command
      ["CLIENT", "KILL", "USER", "victim.app.shop"],
      ["CLIENT", "TRACKING", "on", "BCAST"],
      ["CLIENT", "PAUSE", "10000"],
      ["CLIENT", "NO-EVICT", "on"],
      ["DEBUG", "OBJECT", "attacker:mine"],
      ["LATENCY", "LATEST"],
      ["LATENCY", "DOCTOR"],
      ["SLOWLOG", "GET"], // other tenants' commands, arguments included
      ["MONITOR"],
      ["DBSIZE"],
      ["KEYS", "*"],
      ["SCAN", "0"],
      ["RANDOMKEY"],
      ["PUBSUB", "CHANNELS"],
      ["PUBSUB", "NUMPAT"],
      ["ACL", "LIST"],
      ["ACL", "USERS"],
      ["ACL", "LOG"],
      ["LASTSAVE"],
      ["ROLE"],
      ["LOLWUT"],
      ["MODULE", "LIST"],
      ["CLUSTER", "INFO"],
      ["SELECT", "1"],
      ["SWAPDB", "0", "1"],
      ["FLUSHALL"],
    ]) {
      await expectRefused(command);
    }
    // What concerns its own keys still works.
    expect(Number(await attacker.sendCommand(["MEMORY", "USAGE", "attacker:mine"]))).toBeGreaterThan(0);
    expect(await attacker.sendCommand(["OBJECT", "ENCODING", "attacker:mine"])).toBe("embstr");
    await victimUnharmed();
  });

  it("allows no keyless command but the reviewed ones", async () => {
    // Every command and subcommand this Redis knows, tried with arguments under the app's own
    // prefix: what passes names its keys (filtered by the ACL key pattern), or is reviewed above.
    const prefix = attackerEnv.REDIS_KEY_PREFIX;
    const commands = (await admin.sendCommand<CommandInfo[]>(["COMMAND", "INFO"])).flatMap((info) =>
      info[9].length > 0 ? info[9] : [info],
    );
    const allowedKeyless: string[] = [];
    for (const [name, arity, , firstKey, , , , , keySpecs] of commands) {
      const [command, subcommand] = name.split("|") as [string, string | undefined];
      const argCount = Math.abs(arity) - 1 - (subcommand === undefined ? 0 : 1);
      const args = [command, ...(subcommand === undefined ? [] : [subcommand]), ...Array<string>(argCount).fill(`${prefix}*`)];
      const verdict = await admin.sendCommand<string>(["ACL", "DRYRUN", attackerEnv.REDIS_USER!, ...args]);
      expect(verdict, name).toMatch(/^OK$|no permissions to run/);
      if (verdict === "OK" && firstKey === 0 && keySpecs.length === 0) allowedKeyless.push(name);
    }
    expect(allowedKeyless.sort()).toEqual(REVIEWED_KEYLESS);
  });

  it("keeps answering for the other instances while one app holds every connection slot", async () => {
    const maxclients = (await admin.configGet("maxclients")).maxclients!;
    await admin.configSet("maxclients", "40");
    const flood: Socket[] = [];
    try {
      // Connect until the server turns connections away (it accepts, writes the error, closes).
      for (let i = 0; i < 60; i++) {
        const socket = new Socket();
        socket.on("error", () => {});
        await new Promise<void>((resolve) => socket.connect(Number(attackerEnv.REDIS_PORT), "127.0.0.1", resolve));
        flood.push(socket);
      }
      expect(await failure(appClient(attackerEnv))).toMatch(/max number of clients reached/);

      // The provider works on its own long-lived connection: status, bind, info, create, destroy.
      await victimUnharmed();
      expect(bindEnv(await api.bindApp("victim", "second")).REDIS_USER).toBe("victim.app.second");
      expect((await api.info("victim")).status).toBe(200);
      expect((await api.create("newcomer", "shared")).status).toBe(201);
      expect((await api.status("newcomer")).status).toBe(204);
      expect((await api.destroy("newcomer")).status).toBe(200);
    } finally {
      for (const socket of flood) socket.destroy();
      await admin.configSet("maxclients", maxclients);
    }
  });

  it("answers status calls without opening connections to Redis", async () => {
    const accepted = async () => Number(/total_connections_received:(\d+)/.exec(await admin.info("stats"))?.[1]);
    const before = await accepted();
    const answers = await Promise.all(Array.from({ length: 50 }, () => api.status("victim")));
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(204));
    expect(await accepted()).toBe(before);
  });
});

describe("a provider upgraded from one that let shared apps run scripts", () => {
  let setup: SharedSetup;
  const EARLIER_MARKER = "_provider-kit.shared-rules.0123456789abcdef";
  const rulesMarkers = async () => (await setup.admin.aclUsers()).filter((user) => user.startsWith("_provider-kit.shared-rules."));

  beforeAll(async () => {
    setup = await startSharedSetup("shared-upgrade");
  });

  afterAll(() => setup?.stop());

  it("gives the users bound before the upgrade today's rules at start-up, keeping their passwords", async () => {
    await setup.api.create("legacy", "shared");
    const env = bindEnv(await setup.api.bindApp("legacy", "old"));
    // An OSB instance too, whose users are named after its id (`osb@legacy.osb:...`).
    const { serviceId, planIds } = REDIS_BROKER;
    const osb = broker(setup.provider.url);
    await osb("PUT", "/v2/service_instances/legacy.osb", { service_id: serviceId, plan_id: planIds.shared, organization_guid: "o", space_guid: "s" });
    const bound = await osb("PUT", "/v2/service_instances/legacy.osb/service_bindings/old", {
      service_id: serviceId,
      plan_id: planIds.shared,
      bind_resource: { app_guid: "old" },
    });
    const osbEnv = bound.body.credentials as Record<string, string>;
    // What an earlier version granted: everything but @admin and @dangerous; its rules had another marker.
    for (const user of [env.REDIS_USER!, osbEnv.REDIS_USER!]) await setup.admin.aclSetUser(user, ["+@all", "-@admin", "-@dangerous"]);
    await setup.admin.aclDelUser(await rulesMarkers());
    await setup.admin.aclSetUser(EARLIER_MARKER, ["reset"]);
    const app = await setup.connect(env);
    const osbApp = await setup.connect(osbEnv);
    expect(await app.sendCommand(["EVAL", "return 1", "0"])).toBe(1);

    await setup.restart();
    // Applied in the background at start-up, to the connection the app already has.
    await eventually(async () => /^NOPERM/.test(await failure(app.sendCommand(["EVAL", "return 1", "0"]))));
    await eventually(async () => /^NOPERM/.test(await failure(osbApp.sendCommand(["EVAL", "return 1", "0"]))));
    expect(await failure(app.sendCommand(["SCRIPT", "DEBUG", "SYNC"]))).toMatch(/^NOPERM/);
    await app.set("legacy:still", "works");
    expect(await failure(app.set("outside", "x"))).toMatch(/^NOPERM/);
    expect(await (await setup.connect(env)).get("legacy:still")).toBe("works");
    expect((await setup.api.status("legacy")).status).toBe(204);
    expect(await rulesMarkers()).toEqual([expect.not.stringMatching(EARLIER_MARKER)]);
  });

  it("does not go through the users at a start-up whose rules the server's users already have", async () => {
    const userCommands = async () => {
      const stats = await setup.admin.info("commandstats");
      return ["users", "setuser", "getuser"].map((command) => Number(new RegExp(`cmdstat_acl\\|${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0));
    };
    await setup.api.bindApp("legacy", "another");
    const [users, setUsers, getUsers] = await userCommands();

    await setup.restart();
    await setup.provider.close(); // waits for the start-up work

    // One lookup of the rules marker; no listing, no change.
    expect(await userCommands()).toEqual([users, setUsers, getUsers! + 1]);
  });
});
