/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * An instance's custom actions in the console, in a real browser (headless Chromium), against a
 * platform process driving the Redis example: the panel says how to store a missing manifest,
 * lists the example's actions once it is stored and who holds each, calls them through the
 * platform's proxy (the flush empties the instance's real Redis), shows the platform's refusal
 * to a user whose team holds no grant for the action, and a provider's answer that looks like
 * markup as text.
 */
import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { actions as redisActions } from "../../../../examples/redis/actions.js";
import { appClients } from "../../../../test/support/redis-example.js";
import { tempDir } from "../../../../test/support/data-dirs.js";
import { actionsManifest, declareActions, instanceAction } from "provider-kit";
import { launchBrowser, type TestBrowser } from "./browser.js";
import { ADMIN, manifest, startTestProvider, type Api, type TestProvider } from "./helpers.js";
import { removeDir, START_MS, startPlatformProcess, startRedisExample, type ExampleProvider, type PlatformProcess } from "../../../../test/support/redis-example.js";

const MARKUP = '<img src=x onerror="window.injected = true">';
const DEV = { email: "dev@example.com", password: "dev-password" };

const markupActions = declareActions({
  note: instanceAction({ name: "note", method: "GET", path: "/note", lock: false }),
}).implement({ note: () => MARKUP });

describe("an instance's actions in the console, in a real browser", { timeout: 180_000 }, () => {
  let provider: ExampleProvider | undefined;
  let platform: PlatformProcess | undefined;
  let platformDir: string;
  let browser: TestBrowser | undefined;
  let markup: TestProvider | undefined;
  let api: Api;
  const apps = appClients();
  const pageErrors: string[] = [];

  beforeAll(async () => {
    platformDir = await tempDir("console-actions-platform");
    provider = await startRedisExample();
    platform = await startPlatformProcess(platformDir);
    api = platform.api;
    await api.ok(api.post("/services", { text: provider.manifest }));
    await api.ok(api.post("/services/instances", { json: { name: "cache", service_name: "redis", plan: "shared" } }), 201);
    await api.ok(api.post("/apps", { json: { name: "web", platform: "node" } }));
    await api.ok(api.put("/services/instances/cache/web"));
    // A user whose team may use the service and the instance, but holds no action's grant.
    const dev = await api.user(DEV.email, DEV.password);
    await dev.ok(dev.post("/teams", { json: { name: "devs" } }));
    await api.ok(api.put("/services/redis/devs"));
    await api.ok(api.put("/services/instances/permission/cache/devs"));

    markup = await startTestProvider({ actions: markupActions });
    await api.ok(api.post("/services", { text: manifest("markup", markup.running.url) }));
    await api.ok(api.put("/1.31/services/markup/manifest", { json: actionsManifest(markupActions) }));
    await api.ok(api.post("/services/instances", { json: { name: "page1", service_name: "markup" } }), 201);
    browser = await launchBrowser();
  }, 2 * START_MS);

  afterAll(async () => {
    apps.closeAll();
    await browser?.close();
    await platform?.stop();
    await provider?.stop();
    await markup?.stop();
    await removeDir(platformDir);
  });

  async function loggedIn(user: { email: string; password: string }): Promise<Page> {
    const page = await browser!.browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() !== "error") return;
      // An action's refusal is its answer; the grants a user may not read must not be asked for at all.
      const refusedGrants = /\/1\.31\/services\/[^/]+\/actions$/.test(message.location().url ?? "");
      if (!message.text().startsWith("Failed to load resource") || refusedGrants) pageErrors.push(`${message.text()} ${message.location().url ?? ""}`);
    });
    await page.goto(`${platform!.url}/`);
    await page.type("#login-email", user.email);
    await page.type("#login-password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#nav:not([hidden])");
    return page;
  }

  const waitForText = (page: Page, selector: string, text: string) =>
    page.waitForFunction((s, t) => [...document.querySelectorAll(s)].some((element) => element.textContent?.includes(t)), { timeout: 30_000, polling: 100 }, selector, text);

  /** Opens the instance from the instances page; its actions panel is read again on each visit. */
  async function openInstance(page: Page, name: string): Promise<void> {
    await page.evaluate(() => (location.hash = "#/instances"));
    await waitForText(page, "#instances-rows th a", name);
    await page.$$eval("#instances-rows th a", (links, wanted) => links.find((item) => item.textContent === wanted)!.click(), name);
    await page.waitForFunction((wanted) => document.querySelector("#instance-title")?.textContent === wanted && !(document.querySelector("#instance-detail") as HTMLElement).hidden, { timeout: 30_000, polling: 100 }, name);
  }

  /** What the bind gave the app `web`: the instance's address and credentials, and its key prefix. */
  async function appEnv(): Promise<Record<string, string>> {
    const read = async (name: string) => [name, (await api.ok(api.get(`/apps/web/env/${name}`))).json<{ value: string }>().value];
    return Object.fromEntries(await Promise.all(["REDIS_URL", "REDIS_KEY_PREFIX"].map(read))) as Record<string, string>;
  }

  /** The action's form, by its name. */
  const actionForm = (action: string) => `form.action[data-action="${action}"]`;

  /** Clicks the action's Call button and waits for the answer, which it returns as the page shows it. */
  async function call(page: Page, action: string): Promise<string> {
    await page.$eval(`${actionForm(action)} pre.answer`, (pre) => (pre.textContent = ""));
    await page.click(`${actionForm(action)} button[type=submit]`);
    await page.waitForFunction((selector) => document.querySelector(selector)?.textContent?.startsWith("HTTP "), { timeout: 30_000, polling: 100 }, `${actionForm(action)} pre.answer`);
    return page.$eval(`${actionForm(action)} pre.answer`, (pre) => pre.textContent ?? "");
  }

  it("says how to store a missing manifest, then lists the stored one's actions and calls them through the proxy: flush empties the real Redis", async () => {
    const page = await loggedIn(ADMIN);
    await openInstance(page, "cache");
    await waitForText(page, "#instance-actions", "has no actions manifest stored");
    const how = await page.$eval("#instance-actions pre", (pre) => pre.textContent ?? "");
    expect(how).toContain("provider-kit manifest --actions");
    expect(how).toContain(`${platform!.url}/1.31/services/redis/manifest`);

    await api.ok(api.put("/1.31/services/redis/manifest", { json: actionsManifest(redisActions) }));
    await openInstance(page, "cache");
    await page.waitForSelector(actionForm("flush"));
    const listed = await page.$$eval("form.action", (forms) =>
      forms.map((form) => ({
        action: form.querySelector("legend")?.textContent,
        call: form.querySelector("fieldset > p")?.textContent,
        params: [...form.querySelectorAll("label")].map((label) => label.textContent),
      })),
    );
    expect(listed).toEqual([
      { action: "apps.rotate-password", call: "POST /apps/{app}/rotate-password", params: ["{app}", "Body (JSON, optional)"] },
      { action: "apps.retire-old-passwords", call: "POST /apps/{app}/retire-old-passwords", params: ["{app}", "Body (JSON, optional)"] },
      { action: "flush", call: "POST /flush", params: ["Body (JSON, optional)"] },
      { action: "memory", call: "GET /memory", params: [] },
    ]);
    // The admin reads the grants: a grant on "apps" covers "apps.rotate-password" and "apps.retire-old-passwords".
    await api.ok(api.put("/1.31/services/redis/actions/apps/devs"));
    await openInstance(page, "cache");
    await waitForText(page, `${actionForm("apps.rotate-password")} .grants`, "Granted to: devs.");
    expect(await page.$$eval("form.action .grants", (notes) => notes.map((note) => note.textContent))).toEqual(["Granted to: devs.", "Granted to: devs.", "Granted to no team: admins only.", "Granted to no team: admins only."]);

    // A key written by the bound app, with its own credentials, into the instance's real Redis.
    const env = await appEnv();
    const app = await apps.connect(env);
    const key = `${env.REDIS_KEY_PREFIX}greeting`;
    await app.set(key, "hello");

    const memory = await call(page, "memory");
    expect(memory).toMatch(/^HTTP 200\n\n/);
    expect(JSON.parse(memory.slice("HTTP 200\n\n".length))).toMatchObject({ plan: "shared", keys: 1 });

    // The {app} input fills the path: the provider itself answers that no app "nope" is bound.
    await page.type(`${actionForm("apps.rotate-password")} input`, "nope");
    const rotate = await call(page, "apps.rotate-password");
    expect(rotate).toMatch(/^HTTP 404\n\n/);
    expect(rotate).toContain("is not bound to instance");

    expect(await call(page, "flush")).toMatch(/^HTTP 200\n\n[^]*"removedKeys": 1/);
    expect(await app.exists(key)).toBe(0);

    // Each call is in the timeline, under the proxy request that sent it.
    await page.evaluate(() => (location.hash = "#/calls"));
    await waitForText(page, "#calls-rows .label", "POST /1.20/services/redis/resources/cache/flush");
    const summaries = await page.$$eval("#calls-rows summary", (all) => all.map((summary) => summary.textContent ?? ""));
    for (const line of [/GET \/resources\/cache\/memory → 200/, /POST \/resources\/cache\/apps\/nope\/rotate-password → 404/, /POST \/resources\/cache\/flush → 200/]) {
      expect(summaries.some((summary) => line.test(summary)), String(line)).toBe(true);
    }
    expect(pageErrors).toEqual([]);
  });

  it("shows the platform's refusal to a user whose team holds no grant for the action, and nothing is flushed", async () => {
    const env = await appEnv();
    const app = await apps.connect(env);
    const key = `${env.REDIS_KEY_PREFIX}kept`;
    await app.set(key, "still here");

    const page = await loggedIn(DEV);
    await openInstance(page, "cache");
    await page.waitForSelector(actionForm("flush"));
    // The grants are for the service's owners to read: no note for this user.
    expect(await page.$$(`${actionForm("flush")} .grants`)).toEqual([]);
    const refusal = await call(page, "flush");
    expect(refusal).toMatch(/^HTTP 403\n\n/);
    expect(refusal).toContain("needs the permission service-action.redis.flush");
    expect(await page.$eval("#message", (message) => message.textContent)).toBe("flush on cache: HTTP 403.");
    expect(await app.get(key)).toBe("still here");
    expect(pageErrors).toEqual([]);
  });

  it("shows a provider's answer that looks like markup as text", async () => {
    const page = await loggedIn(ADMIN);
    await openInstance(page, "page1");
    await page.waitForSelector(actionForm("note"));
    const answer = await call(page, "note");
    expect(answer).toContain(MARKUP.replaceAll('"', '\\"'));
    expect(await page.$$("#instance-actions img")).toEqual([]);
    expect(await page.evaluate(() => (window as unknown as { injected?: boolean }).injected)).toBeUndefined();
  });
});
