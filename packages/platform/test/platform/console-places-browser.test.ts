/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The console as a place people keep open, in a real browser (headless Chromium), against an
 * in-process platform and a provider built with createProvider: every page, instance, app,
 * service and call has an address (deep link, reload, back and forward); pages left idle make
 * the platform call no provider; the plan is chosen from the provider's plans and a name the
 * platform would refuse is said beside its field, unsent; an error shows next to the form that
 * caused it; no page scrolls sideways at 375 px; an instance's page tells its story. No page
 * logs an error, a failed resource included.
 */
import type { HTTPRequest, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD } from "../../../../test/support/fake-provider.js";
import { launchBrowser, type TestBrowser } from "./browser.js";
import { ADMIN, manifest, startTestPlatform, startTestProvider, type Api, type TestPlatform, type TestProvider } from "./helpers.js";

/** How long each page is left alone while its provider calls are counted (CONSOLE_IDLE_MS, the minute by default). */
const IDLE_MS = Number(process.env.CONSOLE_IDLE_MS ?? 60_000);
const DEV = { email: "dev@example.com", password: "dev-password" };
const WAIT = { timeout: 30_000, polling: 100 };

/** Every page of the console, lists and details, as addresses. */
const PLACES = ["#/services", "#/services/kv", "#/instances", "#/instances/kv/kv1", "#/apps", "#/apps/shop", "#/calls", "#/log/shop", "#/users"];

describe("the console's addresses, provider calls, forms and story in a real browser", { timeout: 240_000 }, () => {
  let t: TestPlatform;
  let provider: TestProvider;
  let browser: TestBrowser | undefined;
  let dev: Api;
  const pageErrors: string[] = [];
  /** Every request the provider got, health probes included (the platform's timeline does not record those). */
  let providerRequests = 0;

  beforeAll(async () => {
    t = await startTestPlatform("memory");
    provider = await startTestProvider();
    provider.running.server.on("request", () => providerRequests++);
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    await t.admin.ok(t.admin.post("/services/instances", { json: { name: "kv1", service_name: "kv", plan: "small" } }), 201);
    await t.admin.ok(t.admin.post("/apps", { json: { name: "shop", platform: "node" } }));
    await t.admin.ok(t.admin.put("/services/instances/kv1/shop"));
    // A user of the service and the instance, in no team owning the service.
    dev = await t.admin.user(DEV.email, DEV.password);
    await dev.ok(dev.post("/teams", { json: { name: "devs" } }));
    await t.admin.ok(t.admin.put("/services/kv/devs"));
    await t.admin.ok(t.admin.put("/services/instances/permission/kv1/devs"));
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await t?.stop();
    await provider?.stop();
  });

  /**
   * A new page recording its errors: uncaught ones and every console error, failed resources
   * included. Each in a browser context of its own, so each is a window in front (a background
   * tab is hidden, and the console does not read while hidden).
   */
  async function tab(): Promise<Page> {
    const page = await (await browser!.browser.createBrowserContext()).newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    page.on("console", (message) => {
      if (message.type() === "error") pageErrors.push(`${message.text()} ${message.location().url ?? ""}`);
    });
    return page;
  }

  async function logIn(page: Page, user = ADMIN): Promise<void> {
    await page.waitForSelector("#login-form");
    await page.type("#login-email", user.email);
    await page.type("#login-password", user.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#nav:not([hidden])");
  }

  /** Opens the address in a new tab and logs in: the console lands where the link points. */
  async function opened(place: string, user = ADMIN): Promise<Page> {
    const page = await tab();
    await page.goto(`${t.url}/${place}`);
    await logIn(page, user);
    return page;
  }

  const visible = (page: Page, selector: string) =>
    page.waitForFunction((s) => {
      const element = document.querySelector<HTMLElement>(s);
      return element !== null && element.offsetParent !== null;
    }, WAIT, selector);
  const hasText = (page: Page, selector: string, text: string) =>
    page.waitForFunction((s, wanted) => [...document.querySelectorAll(s)].some((element) => (element as HTMLElement).offsetParent !== null && element.textContent?.includes(wanted)), WAIT, selector, text);
  /** Loaded: no spinner nor busy element in sight. */
  const settled = (page: Page) =>
    page.waitForFunction(() => [...document.querySelectorAll(".spinner, [aria-busy=true]")].every((element) => (element as HTMLElement).offsetParent === null), WAIT);
  /** The provider calls the platform has recorded so far. */
  const recordedCalls = async () => Number((await t.admin.ok(t.admin.get("/provider-calls?limit=1"))).headers.get("X-Total-Count"));

  it("gives every place an address: a shared link lands there after logging in, reload keeps it, back and forward move between places", async () => {
    const page = await opened("#/instances/kv/kv1");
    await hasText(page, "#instance-title", "kv1");
    await hasText(page, "#instance-facts", "small");
    expect(await page.$eval("#instances-rows", (rows) => (rows.closest(".list") as HTMLElement).hidden)).toBe(true);

    await page.reload();
    await hasText(page, "#instance-title", "kv1");
    await hasText(page, "#instance-facts", "up");
    expect(await page.evaluate(() => location.hash)).toBe("#/instances/kv/kv1");

    await page.click('#instance-apps a[href="#/apps/shop"]');
    await hasText(page, "#app-title", "shop");
    await page.click('a[href="#/calls"]');
    await hasText(page, "#calls-rows .label", "PUT /services/instances/kv1/shop");
    await page.goBack();
    await hasText(page, "#app-title", "shop");
    await page.goBack();
    await hasText(page, "#instance-title", "kv1");
    expect(await page.evaluate(() => location.hash)).toBe("#/instances/kv/kv1");
    await page.goForward();
    await hasText(page, "#app-title", "shop");

    // A service, a call and an app's log have their addresses too.
    await page.evaluate(() => (location.hash = "#/services/kv"));
    await hasText(page, "#service-plans", "small — 1 GiB");
    const [bind] = (await t.admin.ok(t.admin.get("/provider-calls?instance=kv1"))).json<Array<{ id: number; path: string }>>().filter((call) => call.path.endsWith("/bind-app"));
    await page.evaluate((id) => (location.hash = `#/calls/${id}`), bind!.id);
    await hasText(page, "#call-title", "POST /resources/kv1/bind-app → 201");
    await page.reload();
    await hasText(page, "#call-title", "POST /resources/kv1/bind-app → 201");
    await page.evaluate(() => (location.hash = "#/log/shop"));
    await page.waitForFunction(() => (document.querySelector("#log-app") as HTMLSelectElement).value === "shop", WAIT);
    // The page's title names the place, for the browser's history and tabs.
    expect(await page.title()).toBe("shop · App log — provider-kit platform");
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  it(`makes the platform call no provider while each page is left idle (${IDLE_MS / 1000} s), the non-owner's pages included, and asks no grants it may not read`, async () => {
    const pages: Array<{ page: Page; place: string; requests: string[] }> = [];
    for (const [place, user] of [...PLACES.map((place) => [place, ADMIN] as const), ["#/instances/kv/kv1", DEV] as const]) {
      const page = await opened(place, user);
      const requests: string[] = [];
      page.on("request", (request: HTTPRequest) => requests.push(`${request.method()} ${new URL(request.url()).pathname}`));
      pages.push({ page, place, requests });
    }
    // Loaded: each page's own first reads (provider calls among them) are done.
    for (const { page } of pages) await settled(page);
    await hasText(pages.find((entry) => entry.place === "#/instances/kv/kv1")!.page, "#instance-story", "Bound to the app shop");
    const [before, requestsBefore] = [await recordedCalls(), providerRequests];
    const idleUntil = Date.now() + IDLE_MS;
    // The timers keep running in every tab: the pages that follow the platform's records read them again.
    await Promise.all(pages.map(({ page }) => page.waitForFunction((until) => Date.now() >= until, { timeout: IDLE_MS + 30_000, polling: 1000 }, idleUntil)));
    expect(await recordedCalls()).toBe(before);
    expect(providerRequests).toBe(requestsBefore);
    expect(await Promise.all(pages.map(({ page }) => page.evaluate(() => document.hidden)))).toEqual(pages.map(() => false));
    for (const { place, requests } of pages.filter((entry) => /instances|apps|calls|log/.test(entry.place))) {
      expect(requests.length, `${place} read the platform's records while idle`).toBeGreaterThan(0);
    }
    const devPage = pages[pages.length - 1]!;
    expect(devPage.requests.filter((request) => request.includes("/1.31/services/kv/actions"))).toEqual([]);
    for (const { page } of pages) await page.close();
    expect(pageErrors).toEqual([]);
  });

  it("offers the service's plans in a chooser, and says a name the platform would refuse beside its field without sending it", async () => {
    const page = await opened("#/instances?service=kv");
    await page.waitForSelector('#instance-plan option[value="large"]');
    expect(await page.$$eval("#instance-plan option", (options) => options.map((option) => [option.value, option.textContent]))).toEqual([
      ["", "The provider's default"],
      ["small", "small — 1 GiB"],
      ["large", "large — 8 GiB"],
    ]);
    const creates: string[] = [];
    page.on("request", (request) => {
      if (request.method() === "POST" && new URL(request.url()).pathname === "/services/instances") creates.push(request.url());
    });
    await page.type("#instance-name", "9lives");
    await page.click("#instance-form button[type=submit]");
    await visible(page, "#instance-name-error");
    expect(await page.$eval("#instance-name-error", (slot) => slot.textContent)).toBe('"9lives" is not a name the platform takes: start with a letter, then letters, digits, "-" or "_" (at least 2 characters).');
    expect(await page.$eval("#instance-name", (input) => [input.getAttribute("aria-invalid"), document.activeElement === input])).toEqual(["true", true]);
    expect(creates).toEqual([]);

    // Corrected, with a plan chosen: created with that plan.
    await page.$eval("#instance-name", (input) => ((input as HTMLInputElement).value = ""));
    await page.type("#instance-name", "kv2");
    expect(await page.$("#instance-name-error:not([hidden])")).toBeNull();
    await page.select("#instance-plan", "large");
    await page.click("#instance-form button[type=submit]");
    await hasText(page, "#instances-rows th", "kv2");
    expect(creates).toHaveLength(1);
    expect(provider.received.filter((call) => call.handler === "create").map((call) => (call.request as { plan?: string }).plan)).toContain("large");
    await page.close();
    expect(pageErrors.filter((error) => !error.includes("status of 409"))).toEqual([]);
  });

  it("shows a failed creation's error inside the form that sent it, saying what to do, not at the page's foot", async () => {
    const page = await opened("#/instances?service=kv");
    await page.waitForSelector('#instance-plan option[value="small"]');
    await page.type("#instance-name", "kv1");
    await page.click("#instance-form button[type=submit]");
    await visible(page, "#instance-form-error");
    expect(await page.$eval("#instance-form-error", (slot) => slot.textContent)).toBe("Creating the instance kv1 failed: instance name already exists.");
    // Inside the form, right above its button.
    expect(await page.$eval("#instance-form-error", (slot) => [slot.closest("form")?.id, slot.nextElementSibling?.querySelector("button")?.textContent])).toEqual(["instance-form", "Create"]);
    const [form, error] = await Promise.all(["#instance-form", "#instance-form-error"].map((selector) => page.$eval(selector, (element) => {
      const box = element.getBoundingClientRect();
      return { top: box.top, bottom: box.bottom };
    })));
    expect(error!.top).toBeGreaterThanOrEqual(form!.top);
    expect(error!.bottom).toBeLessThanOrEqual(form!.bottom);
    expect(await page.$eval("#message", (message) => message.textContent)).toBe("");
    // A refusal says whom to ask.
    await page.evaluate(() => (location.hash = "#/users"));
    await page.waitForFunction(() => document.querySelector("#users-rows")?.textContent?.includes("admin"), WAIT);
    await page.type("#user-email", DEV.email);
    await page.type("#user-password", "another-password");
    await page.click("#user-form button[type=submit]");
    await visible(page, "#user-error");
    expect(await page.$eval("#user-error", (slot) => slot.closest("form")?.id)).toBe("user-form");
    await page.close();
    // The platform's 409s are the errors shown.
    expect(pageErrors.filter((error) => !error.includes("status of 409"))).toEqual([]);
    pageErrors.length = 0;
  });

  it("scrolls no page sideways at 375 px wide", async () => {
    const page = await tab();
    await page.setViewport({ width: 375, height: 740 });
    await page.goto(`${t.url}/`);
    const overflow = () => page.evaluate(() => document.scrollingElement!.scrollWidth - document.scrollingElement!.clientWidth);
    await page.waitForSelector("#login-form");
    expect(await overflow(), "the login page").toBeLessThanOrEqual(0);
    await logIn(page);
    for (const place of PLACES) {
      await page.evaluate((hash) => (location.hash = hash), place);
      await settled(page);
      expect(await overflow(), place).toBeLessThanOrEqual(0);
    }
    await page.close();
    expect(pageErrors).toEqual([]);
  });

  it("tells an instance's story: each thing done to it, newest first, with its calls to the provider, their status and timing, request and answer one click away", async () => {
    const page = await opened("#/apps/shop");
    await page.waitForSelector('button[aria-label="Unbind kv1"]');
    await page.click('button[aria-label="Unbind kv1"]');
    await hasText(page, "#app-bound", "No instance bound yet");
    await page.evaluate(() => (location.hash = "#/instances/kv/kv1"));
    await hasText(page, "#instance-story .doing", "Unbound from the app shop");
    const story = await page.$$eval("#instance-story > li.step", (steps) =>
      steps.map((step) => ({
        doing: step.querySelector(".doing strong")?.textContent,
        calls: [...step.querySelectorAll(".exchange summary")].map((summary) => `${summary.querySelector(".method")?.textContent} ${summary.querySelector("code")?.textContent} ${summary.querySelector(".outcome")?.textContent}`),
        timed: [...step.querySelectorAll(".exchange .timing")].every((timing) => /\d+ ms$/.test(timing.textContent ?? "")),
      })),
    );
    expect(story).toEqual([
      // The app's unit, then the app (the platform's order for an unbind, the reverse of a bind's).
      { doing: "Unbound from the app shop", calls: ["DELETE /resources/kv1/bind ← 200", "DELETE /resources/kv1/bind-app ← 200"], timed: true },
      { doing: "Bound to the app shop", calls: ["POST /resources/kv1/bind-app ← 201", "POST /resources/kv1/bind ← 201"], timed: true },
      { doing: "Created", calls: ["POST /resources ← 201"], timed: true },
    ]);
    // The console's own reads (status, info) are not part of the story.
    expect(await page.$eval("#instance-story", (list) => list.textContent)).not.toContain("/status");
    // One click opens a call's request and answer.
    const [bindCall] = await page.$$("#instance-story > li.step:nth-child(2) .exchange summary");
    await bindCall!.click();
    const headings = await page.$eval("#instance-story details[open]", (details) => [...details.querySelectorAll("h4")].map((heading) => heading.textContent));
    expect(headings).toEqual(["Request", "Answer", "Reproduce with curl"]);
    const shown = await page.$eval("#instance-story", (list) => list.textContent ?? "");
    expect(shown).toContain("POST http://127.0.0.1");
    // The bind's secrets and the provider's password stay out of it.
    expect(shown).not.toContain("bind-secret-value");
    expect(shown).not.toContain(PASSWORD);
    await page.close();
    expect(pageErrors).toEqual([]);
  });
});
