/**
 * The kit leaves nothing behind (issue 44): against a provider that keeps real state (a folder
 * per instance, a file per database user, as tsuru/postgres-api keeps databases and roles), what
 * the run made is removed, the newest first, and what the provider will not remove is named with
 * the call that removes it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { formatTree, runConformance } from "../../src/conformance/index.js";
import { CREDENTIALS, FAST, ids, serving } from "./helpers.js";
import { closeConnections, folderProvider, folderState } from "./folder-provider.js";

let root: string;
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), "pkc-debris-"));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("a provider with a database per instance and users keyed by the app's address", () => {
  it("is judged as postgres-api is, and is left with nothing the run made", async () => {
    await serving(folderProvider({ ...CREDENTIALS, root }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      expect(ids(report, "fail")).toEqual(["bind-app.rebind", "unbind-app.status", "unbind-app.repeat"]);
      // The first app's unbind fails because the kit's swap steps dropped its user: isolation.swap is the root cause.
      const followers = Object.fromEntries(report.results.filter((result) => result.followsFrom).map((result) => [result.id, result.followsFrom]));
      expect(followers).toEqual({ "unbind-app.status": "isolation.swap" });
      expect(folderState(root)).toEqual({ databases: [], users: [] });
      // The unbind the provider refused to the end is named, with the call that would remove it.
      const app = `${report.instance}-app`;
      expect(report.leftovers).toEqual([
        {
          instance: report.instance,
          binding: `app ${app}`,
          reason: expect.stringMatching(new RegExp(`^DELETE /resources/${report.instance}/bind-app answered 500: role "u_[0-9a-f]+" does not exist$`)),
          removeWith: `DELETE /resources/${report.instance}/bind-app (app-name=${app}, app-host=${app}.example.com)`,
        },
      ]);
    });
  });

  it("that cannot drop a database a failed unbind left a connection to: the report names it, with the call that removes it", async () => {
    await serving(folderProvider({ ...CREDENTIALS, root, leakOnFailedUnbind: true }), async ({ url }) => {
      const report = await runConformance({ url, ...CREDENTIALS, ...FAST });
      // Every user is dropped; the database stays, and the report names it.
      expect(folderState(root)).toEqual({ databases: [report.instance], users: [] });
      const database = report.leftovers.find((leftover) => leftover.binding === undefined);
      expect(database).toEqual({
        instance: report.instance,
        reason: `DELETE /resources/${report.instance} answered 500: database "${report.instance}" is being accessed by other users`,
        removeWith: `DELETE /resources/${report.instance}`,
      });
      expect(formatTree(report)).toContain(`remove it with DELETE /resources/${report.instance}, or by hand.`);
      // Once the connections are closed, that call removes it.
      closeConnections(root, report.instance);
      const auth = `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`;
      const [method, route] = database!.removeWith.split(" ");
      expect((await fetch(`${url}${route}`, { method, headers: { Authorization: auth } })).status).toBe(200);
      expect(folderState(root)).toEqual({ databases: [], users: [] });
    });
  });
});
