/**
 * The two ways a web page reaches a platform on the developer's machine, from real Chromium:
 * a page whose host name is re-pointed to 127.0.0.1 (DNS rebinding, played by a loopback proxy
 * and Chromium's host resolver rules), and a page of another origin sending simple requests.
 * The platform runs with sign-up open and run allowed: the host and origin checks alone must hold.
 */
import { once } from "node:events";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser, type TestBrowser } from "./browser.js";
import { ADMIN, startTestPlatform, type TestPlatform } from "./helpers.js";

const ATTACKER = "attacker.test";

/** What the attacker's page tries, one call after the other; it records each status. */
const ATTACK = `
  const json = (body) => ({ method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  window.attack = (async () => {
    const seen = {};
    seen.signUp = (await fetch("/users", json({ email: "evil@example.com", password: "secret-1" }))).status;
    const login = await fetch("/users/${ADMIN.email}/tokens", json({ password: "${ADMIN.password}" }));
    seen.login = login.status;
    const token = login.status === 200 ? (await login.json()).token : "none";
    const auth = { Authorization: "bearer " + token };
    seen.createApp = (await fetch("/apps", { ...json({ name: "evil", platform: "node" }), headers: { ...auth, "Content-Type": "application/json" } })).status;
    seen.run = (await fetch("/apps/evil/run", { method: "POST", headers: auth, body: "id -un" })).status;
    seen.read = (await fetch("/info")).status;
    return seen;
  })();
`;

async function listen(server: Server): Promise<number> {
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return (server.address() as AddressInfo).port;
}

/** Serves the attacker's page at /attack and hands every other request, Host and all, to `target`. */
function rebindingProxy(target: URL): Server {
  return createServer((req, res) => {
    if (req.url === "/attack") {
      res.setHeader("Content-Type", "text/html");
      res.end(`<!doctype html><title>attack</title><script>${ATTACK}</script>`);
      return;
    }
    const forwarded = request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
}

describe("a web page against the platform, in real Chromium", () => {
  let t: TestPlatform;
  let browser: TestBrowser;
  const servers: Server[] = [];
  beforeAll(async () => {
    t = await startTestPlatform("memory", { openSignup: true, allowRun: true });
    browser = await launchBrowser([`--host-resolver-rules=MAP ${ATTACKER} 127.0.0.1`]);
  });
  afterAll(async () => {
    await browser?.close();
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
    await t?.stop();
  });

  it("gets nothing through DNS rebinding: no sign-up, no login, no app, no run, nothing read", async () => {
    const proxy = rebindingProxy(new URL(t.url));
    servers.push(proxy);
    const port = await listen(proxy);
    const page = await browser.browser.newPage();
    await page.goto(`http://${ATTACKER}:${port}/attack`);
    const seen = await page.evaluate(() => (window as unknown as { attack: Promise<Record<string, number>> }).attack);
    expect(seen).toEqual({ signUp: 403, login: 403, createApp: 403, run: 403, read: 403 });
    expect((await t.anonymous.post("/users/evil@example.com/tokens", { json: { password: "secret-1" } })).status).toBe(401);
    expect((await t.admin.get("/apps/evil")).status).toBe(404);
  });

  it("changes nothing from another origin's page, even with requests that need no preflight", async () => {
    const attackerSite = createServer((_req, res) => {
      res.setHeader("Content-Type", "text/html");
      res.end(`<!doctype html><title>other site</title><script>
        window.attack = fetch(${JSON.stringify(`${t.url}/users`)}, {
          method: "POST", mode: "no-cors",
          headers: { "Content-Type": "application/x-www-form-urlencoded" },
          body: "email=cross-site%40example.com&password=secret-1",
        }).then(() => "sent");
      </script>`);
    });
    servers.push(attackerSite);
    const port = await listen(attackerSite);
    const page = await browser.browser.newPage();
    await page.goto(`http://127.0.0.1:${port}/`);
    expect(await page.evaluate(() => (window as unknown as { attack: Promise<string> }).attack)).toBe("sent");
    expect((await t.anonymous.post("/users/cross-site@example.com/tokens", { json: { password: "secret-1" } })).status).toBe(401);
  });

  it("lets the admin create a user from the console's Users page while sign-up is closed", async () => {
    const closed = await startTestPlatform("memory");
    try {
      const page = await browser.browser.newPage();
      await page.goto(`${closed.url}/`);
      await page.type("#login-email", ADMIN.email);
      await page.type("#login-password", ADMIN.password);
      await page.click("#login-form button[type=submit]");
      await page.waitForSelector("#nav-users:not([hidden])");
      await page.click('a[href="#/users"]');
      await page.waitForFunction(() => document.querySelector("#users-rows")?.textContent?.includes("admin"), { timeout: 30_000, polling: 100 });
      await page.type("#user-email", "newcomer@example.com");
      await page.type("#user-password", "secret-1");
      await page.click("#user-form button[type=submit]");
      await page.waitForFunction(() => document.querySelector("#message")?.textContent?.includes("Create user newcomer@example.com: done."), { timeout: 30_000, polling: 100 });
      await closed.anonymous.login("newcomer@example.com", "secret-1");
    } finally {
      await closed.stop();
    }
  });

  it("shows the services page for an address naming no page, even one on Object's prototype", async () => {
    const page = await browser.browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (error) => errors.push(String(error)));
    await page.goto(`${t.url}/`);
    await page.type("#login-email", ADMIN.email);
    await page.type("#login-password", ADMIN.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#nav:not([hidden])");
    for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      await page.evaluate((hash) => (location.hash = hash), name);
      await page.waitForFunction(() => !(document.querySelector("#page-services") as HTMLElement).hidden, { timeout: 10_000, polling: 50 });
    }
    expect(errors).toEqual([]);
  });
});
