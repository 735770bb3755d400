/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The console in a real browser (headless Chromium from Debian's `chromium`), against a
 * platform process driving the Redis example with real processes. The example's redis-servers
 * start 3 s late, so the dedicated instance is seen pending before it is up. A provider that
 * reports its progress (`ctx.progress`) has it shown beside "pending".
 */
import type { Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../../../../test/support/data-dirs.js";
import { launchBrowser, type TestBrowser } from "./browser.js";
import { ADMIN, manifest, startProgressProvider, startTestProvider, type Api, type TestProvider } from "./helpers.js";
import { PROVIDER_PASSWORD, removeDir, START_MS, startPlatformProcess, startRedisExample, type ExampleProvider, type PlatformProcess } from "../../../../test/support/redis-example.js";

describe("the platform console in a real browser", { timeout: 180_000 }, () => {
  let provider: ExampleProvider | undefined;
  let platform: PlatformProcess | undefined;
  let platformDir: string;
  let browser: TestBrowser | undefined;
  let sick: TestProvider | undefined;
  let pooled: TestProvider | undefined;
  let page: Page;
  let api: Api;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    platformDir = await tempDir("console-platform");
    provider = await startRedisExample({ slowStartSeconds: 3 });
    // A pool served by a cluster, for an instance of a multi-cluster service.
    platform = await startPlatformProcess(platformDir, 0, ["--pool", "local", "--pool", "gpu", "--cluster", "east=gpu"]);
    api = platform.api;
    await api.ok(api.post("/services", { text: provider.manifest }));
    await api.ok(api.post("/apps", { json: { name: "web", platform: "node" } }));
    // A provider whose instance is down, for the reason shown beside the status.
    sick = await startTestProvider({ status: async () => ({ down: "the disk is full" }) });
    await api.ok(api.post("/services", { text: manifest("sick", sick.running.url) }));
    await api.ok(api.post("/services/instances", { json: { name: "ill", service_name: "sick" } }), 201);
    pooled = await startTestProvider();
    await api.ok(api.post("/services", { text: manifest("mc", pooled.running.url, { "multi-cluster": true }) }));
    browser = await launchBrowser();
    page = await browser.browser.newPage();
    page.on("pageerror", (error) => pageErrors.push(String(error)));
    // The page's own files all load; API answers (fetch) may be errors the page shows.
    page.on("response", (response) => {
      if (response.status() >= 400 && response.request().resourceType() !== "fetch") pageErrors.push(`${response.status()} ${response.url()}`);
    });
    page.on("console", (message) => {
      if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) pageErrors.push(message.text());
    });
  }, 2 * START_MS);

  afterAll(async () => {
    await browser?.close();
    await platform?.stop();
    await provider?.stop();
    await sick?.stop();
    await pooled?.stop();
    await removeDir(platformDir);
  });

  /** Texts of the elements matching `selector`. */
  const texts = (selector: string) => page.$$eval(selector, (elements) => elements.map((element) => element.textContent ?? ""));
  const rowOf = (name: string) =>
    page.$$eval("#instances-rows tr", (rows, wanted) => {
      const row = rows.find((candidate) => candidate.querySelector("th")?.textContent === wanted);
      return row ? [...row.querySelectorAll("th, td")].map((cell) => cell.textContent) : undefined;
    }, name);
  /** Waits for `text` in an element; on a timeout, says what the page showed instead. */
  const waitForText = (selector: string, text: string, timeout = 30_000) =>
    page
      .waitForFunction(
        (s, t) => [...document.querySelectorAll(s)].some((element) => element.textContent?.includes(t)),
        { timeout, polling: 100 },
        selector,
        text,
      )
      .catch(async (error: unknown) => {
        const shown = await page.evaluate((s) => ({
          matching: [...document.querySelectorAll(s)].map((element) => element.textContent),
          message: document.getElementById("message")?.textContent,
          errors: [...document.querySelectorAll("[id$=-error]:not([hidden])")].map((element) => `${element.id}: ${element.textContent}`),
        }), selector);
        throw new Error(`"${text}" never showed in ${selector}: ${String(error)}\nThe page showed: ${JSON.stringify(shown)}\nPage errors: ${pageErrors.join("; ")}`);
      });

  it("logs in, sees a dedicated instance go from pending to up (and another down, with the reason), binds an app, reveals its variables, runs redis-cli ping and reads the bind calls", async () => {
    await page.goto(`${platform!.url}/`);
    // Nothing but the login form before logging in.
    expect(await page.$eval("#nav", (nav) => (nav as HTMLElement).hidden)).toBe(true);
    await page.type("#login-email", ADMIN.email);
    await page.type("#login-password", ADMIN.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#nav:not([hidden])");
    await waitForText("#services-rows th", "redis");
    expect(await texts("#services-rows td")).toContain("A");

    // Create the instance through the console's form.
    await page.click('a[href="#/instances"]');
    await page.waitForSelector('#instance-service option[value="redis"]');
    await page.type("#instance-name", "big");
    await page.select("#instance-service", "redis");
    await page.waitForSelector('#instance-plan option[value="dedicated"]');
    await page.select("#instance-plan", "dedicated");
    await page.click("#instance-form button[type=submit]");
    await page.waitForFunction(
      () => [...document.querySelectorAll("#instances-rows tr")].some((row) => row.querySelector("th")?.textContent === "big" && row.querySelector(".status")?.textContent === "pending"),
      { timeout: 30_000, polling: 100 },
    );
    expect((await rowOf("big"))!.slice(0, 7)).toEqual(["big", "redis", "dedicated", "—", "admin", "pending", "none"]);
    // The provider's info, from GET /resources/<i>, in the last column.
    expect(await rowOf("ill")).toEqual(["ill", "sick", "—", "—", "admin", "down: 500 the disk is full", "none", "Plan: default"]);
    expect(await texts("#instances-rows ul.info li")).toContain("Plan: dedicated");
    await page.waitForFunction(
      () => [...document.querySelectorAll("#instances-rows tr")].some((row) => row.querySelector("th")?.textContent === "big" && row.querySelector(".status")?.textContent === "up"),
      { timeout: 60_000, polling: 200 },
    );

    // Bind the app from its page.
    await page.click('a[href="#/apps"]');
    await waitForText("#apps-rows a", "web");
    await page.click("#apps-rows a");
    await page.waitForSelector('#bind-instance option[value="big"]');
    await page.click("#bind-form button[type=submit]");
    await waitForText("#app-bound li", "big (redis)");
    await waitForText("#env-rows th", "REDIS_URL");
    expect(await texts("#app-bound li")).toEqual(["big (redis) Unbind"]);

    // Private values are masked until shown.
    const url = (await api.ok(api.get("/apps/web/env/REDIS_URL"))).json<{ value: string }>().value;
    expect(url).toMatch(/^redis:\/\//);
    expect(await page.$eval("#app-detail", (detail) => detail.textContent)).not.toContain(url);
    await page.click('button[aria-label="Show REDIS_URL"]');
    await waitForText("#env-rows code.value", url);
    await page.click("#services-reveal");
    await page.waitForSelector("#tsuru-services:not([hidden])");
    const services = await page.$eval("#tsuru-services", (pre) => pre.textContent ?? "");
    expect(services).toContain('\n      "instance_name": "big",');
    expect((JSON.parse(services) as { redis: [{ envs: Record<string, string> }] }).redis[0].envs.REDIS_URL).toBe(url);

    // Run redis-cli with the app's environment.
    await page.type("#run-command", 'redis-cli --no-auth-warning -u "$REDIS_URL" ping');
    await page.click("#run-form button[type=submit]");
    await waitForText("#run-output", "PONG");
    expect((await page.$eval("#run-output", (pre) => pre.textContent ?? "")).trim()).toBe("PONG");

    // The bind's calls in the timeline, under the operation that sent them, with their curl lines.
    await page.click('a[href="#/calls"]');
    await waitForText("#calls-rows .label", "PUT /services/instances/big/web");
    const operation = await page.$$eval("#calls-rows > li.operation", (items) => {
      const bind = items.find((item) => item.querySelector(".label")?.textContent === "PUT /services/instances/big/web")!;
      return [...bind.querySelectorAll(":scope > ol > li.call summary")].map((summary) => summary.textContent ?? "");
    });
    expect(operation.some((line) => /POST \/resources\/big\/bind-app → 201/.test(line))).toBe(true);
    expect(operation.some((line) => /POST \/resources\/big\/bind → 201/.test(line))).toBe(true);
    const curls = await page.$$eval("#calls-rows pre.curl", (pres) => pres.map((pre) => pre.textContent ?? ""));
    const bindCurl = curls.find((line) => line.includes("/resources/big/bind-app"));
    expect(bindCurl).toMatch(/^curl /);
    expect(curls.join("\n")).not.toContain(PROVIDER_PASSWORD);
    // A call opens on click, showing its request and answer.
    const summary = await page.$$("#calls-rows details summary");
    await summary[0]!.click();
    expect(await page.$eval("#calls-rows details[open] pre.curl", (pre) => (pre as HTMLElement).offsetHeight)).toBeGreaterThan(0);

    expect(pageErrors).toEqual([]);
  });

  it("creates an instance of a multi-cluster service in a pool, and shows the pool and its cluster", async () => {
    await page.click('a[href="#/instances"]');
    await page.waitForSelector('#instance-service option[value="mc"]');
    await page.type("#instance-name", "pooled");
    await page.select("#instance-service", "mc");
    await page.waitForSelector('#instance-pool option[value="gpu"]');
    await page.select("#instance-pool", "gpu");
    // The provider's plans for that pool.
    await page.waitForSelector('#instance-plan option[value="small"]');
    await page.click("#instance-form button[type=submit]");
    await waitForText("#instances-rows th", "pooled");
    expect((await rowOf("pooled"))!.slice(0, 5)).toEqual(["pooled", "mc", "—", "gpu (cluster east)", "admin"]);
    expect(pooled!.received.map((call) => call.handler)).toContain("create");
  });

  it("shows the progress a provider reports while an instance is pending, then up", async () => {
    const restoring = await startProgressProvider("restoring snapshot, 40%");
    try {
      await api.ok(api.post("/services", { text: manifest("snapshots", restoring.url) }));
      await api.ok(api.post("/services/instances", { json: { name: "restored", service_name: "snapshots" } }), 201);
      await restoring.reported;
      // Away and back: the list reads the new instance's status, with the provider's message.
      await page.click('a[href="#/apps"]');
      await page.click('a[href="#/instances"]');
      await waitForText("#instances-rows .status", "pending (restoring snapshot, 40%)");
      expect((await rowOf("restored"))![5]).toBe("pending (restoring snapshot, 40%)");
      restoring.finish();
      // A pending instance's status is read again while the page shows it.
      await page.waitForFunction(
        () => [...document.querySelectorAll("#instances-rows tr")].some((row) => row.querySelector("th")?.textContent === "restored" && row.querySelector(".status")?.textContent === "up"),
        { timeout: 60_000, polling: 200 },
      );
      expect(pageErrors).toEqual([]);
    } finally {
      await restoring.stop();
    }
  });
});
