/**
 * The local platform doc's table of the spec's routes (docs/tools/platform.md) cannot drift: it lists exactly the routes of the spec
 * (management-api.md, transcribed below in its order), each marked served or served with a
 * documented difference, and each really answers on a running platform (never the "no route" 404).
 */
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN, Api, startTestPlatform, type TestPlatform } from "./helpers.js";

/** Every endpoint row of the spec, as method and path. */
const SPEC_ROUTES = [
  "GET /apps",
  "GET /apps/<appname>",
  "DELETE /apps/<appname>",
  "POST /apps",
  "GET /apps/<appname>/restart",
  "GET /apps/<appname>/env",
  "POST /apps/<appname>/env",
  "DELETE /apps/<appname>/env",
  "POST /apps/<appname>/run?once=<boolean>",
  "PUT /swap?app1=<appname>&app2=<appname>",
  "GET /apps/<appname>/log?lines=<integer>&source=<string>&unit=<string>",
  "GET /apps/<appname>/logs?lines=<integer>&source=<string>&unit=<string>",
  "GET /pools",
  "POST /apps/<appname>/pool",
  "GET /services",
  "POST /services",
  "PUT /services",
  "DELETE /services/<servicename>",
  "GET /services/<servicename>",
  "GET /services/<servicename>/doc",
  "PUT /services/<servicename>/doc",
  "PUT /services/<servicename>/<teamname>",
  "DELETE /services/<servicename>/<teamname>",
  "POST /services/instances",
  "DELETE /services/instances/<serviceinstancename>",
  "PUT /services/instances/<serviceinstancename>/<appname>",
  "DELETE /services/instances/<serviceinstancename>/<appname>",
  "GET /services/instances?app=<appname>",
  "GET /services/instances/<serviceinstancename>",
  "GET /services/instances/<serviceinstancename>/status",
  "PUT /services/instances/permission/<servicename>/<teamname>",
  "DELETE /services/instances/permission/<servicename>/<teamname>",
  "GET /quota/<user>",
  "GET /healers",
  "GET /healers/<healer>",
  "GET /platforms",
  "POST /users",
  "POST /users/<email>/password?token=<string>",
  "POST /users/<email>/tokens",
  "DELETE /users/tokens",
  "GET /users/info",
  "PUT /users/password",
  "DELETE /users",
  "POST /users/keys",
  "DELETE /users/keys",
  "GET /users/api-key",
  "POST /users/api-key",
  "GET /teams",
  "GET /teams/<teamname>",
  "POST /teams",
  "DELETE /teams/<teamname>",
  "PUT /teams/<teamname>/<username>",
  "DELETE /teams/<teamname>/<username>",
  "POST /tokens",
  "GET /deploys?app=<appname>&service=<servicename>",
  "GET /deploys/<deployid>",
  "GET /info",
  "GET /healthcheck/",
  "GET /healthcheck/?check=all",
];

const SAMPLES: Record<string, string> = {
  appname: "web",
  servicename: "svc",
  serviceinstancename: "inst",
  teamname: "admin",
  username: ADMIN.email,
  email: ADMIN.email,
  user: ADMIN.email,
  healer: "bind-units",
  deployid: "0123456789abcdef01234567",
  integer: "5",
  boolean: "true",
  string: "x",
};

interface Row {
  route: string;
  status: string;
  note: string;
}

async function readmeRows(): Promise<Row[]> {
  const readme = await readFile(resolve(import.meta.dirname, "../../../../docs/tools/platform.md"), "utf8");
  const section = /<!-- spec-routes -->([\s\S]*?)<!-- \/spec-routes -->/.exec(readme)?.[1];
  if (!section) throw new Error("docs/tools/platform.md has no <!-- spec-routes --> section");
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [route = "", status = "", note = ""] = line.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
      return { route: route.replace(/^`|`$/g, ""), status, note };
    });
}

describe("the platform doc's table of the spec's routes", () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform("memory");
  });
  afterAll(() => t.stop());

  it("lists exactly the spec's routes, in its order, each served or served with its difference written down", async () => {
    const rows = await readmeRows();
    expect(rows.map((row) => row.route)).toEqual(SPEC_ROUTES);
    for (const row of rows) {
      expect(["served", "served, differs"], row.route).toContain(row.status);
      if (row.status === "served, differs") expect(row.note, row.route).not.toBe("");
    }
  });

  it("each route answers on a running platform", async () => {
    for (const route of SPEC_ROUTES) {
      const [method, template] = route.split(" ") as [string, string];
      const path = template.replace(/<(\w+)>/g, (_, name: string) => SAMPLES[name] ?? name);
      // A fresh login each time: DELETE /users/tokens ends the session it is sent with.
      const api = await new Api(t.url).login(ADMIN.email, ADMIN.password);
      const answer = await api.send(method, path, ["POST", "PUT", "DELETE"].includes(method) ? { json: {} } : {});
      expect(answer.text, route).not.toMatch(/^The platform has no route/);
      // Sample names that do not exist, empty bodies: 4xx answers, never a 5xx.
      expect(answer.status, `${route}: ${answer.text}`).toBeLessThan(500);
    }
  });
});
