/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * `npm run screenshots`: writes a screenshot of each console page to docs/console/ (light, and
 * dark for some; one at 375 px wide), against a platform process driving the Redis example with real
 * processes, plus a provider whose unit binds fail (to show a failed bind and its undo calls).
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import type { Page } from "puppeteer-core";
import { actions as redisActions } from "../../../../examples/redis/actions.js";
import { actionsManifest, ProviderError } from "provider-kit";
import { eventually } from "../../../../test/support/eventually.js";
import { tempDir } from "../../../../test/support/data-dirs.js";
import { launchBrowser } from "./browser.js";
import { ADMIN, manifest, startTestProvider } from "./helpers.js";
import { removeDir, startPlatformProcess, startRedisExample } from "../../../../test/support/redis-example.js";

const OUT = resolve(import.meta.dirname, "../../../../docs/console");

async function shoot(page: Page, name: string, hash: string, ready: string, dark = false): Promise<void> {
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: dark ? "dark" : "light" }]);
  await page.evaluate((wanted) => (location.hash = wanted), hash);
  await page.waitForSelector(ready, { timeout: 30_000 });
  await new Promise((done) => setTimeout(done, 500));
  await page.screenshot({ path: `${OUT}/${name}.png`, fullPage: true });
  console.log(`wrote docs/console/${name}.png`);
}

async function main(): Promise<void> {
  await mkdir(OUT, { recursive: true });
  const platformDir = await tempDir("screenshots-platform");
  const redis = await startRedisExample();
  let unitBinds = 0;
  const flaky = await startTestProvider({
    bindUnit: async () => {
      if (++unitBinds === 2) throw new ProviderError("unit bind refused: this plan allows one unit", 500);
      return undefined;
    },
    status: async () => ({ down: "the disk is full" }),
  });
  const platform = await startPlatformProcess(platformDir);
  const browser = await launchBrowser();
  try {
    const { api } = platform;
    await api.ok(api.post("/services", { text: redis.manifest }));
    await api.ok(api.post("/services", { text: manifest("flaky", flaky.running.url) }));
    await api.ok(api.post("/apps", { json: { name: "web", platform: "node" } }));
    await api.ok(api.put("/apps/web/units", { text: "1" }));
    await api.ok(api.post("/apps/web/env", { json: { envs: [{ name: "GREETING", value: "hello" }] } }));
    await api.ok(api.post("/services/instances", { json: { name: "cache", service_name: "redis", plan: "shared" } }), 201);
    await api.ok(api.post("/services/instances", { json: { name: "big", service_name: "redis", plan: "dedicated" } }), 201);
    await api.ok(api.post("/services/instances", { json: { name: "flaky1", service_name: "flaky" } }), 201);
    await eventually(async () => (await api.get("/services/instances/big/status")).text.includes("is up"), 60_000);
    await api.ok(api.put("/services/instances/cache/web"));
    await api.ok(api.put("/services/instances/big/web"));
    await api.put("/services/instances/flaky1/web"); // fails: its undo calls show in the timeline
    await api.ok(api.put("/1.31/services/redis/manifest", { json: actionsManifest(redisActions) }));

    const page = await browser.browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    await page.goto(`${platform.url}/`);
    await page.waitForSelector("#login-form");
    await page.screenshot({ path: `${OUT}/login.png` });
    console.log("wrote docs/console/login.png");
    await page.type("#login-email", ADMIN.email);
    await page.type("#login-password", ADMIN.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#nav:not([hidden])");

    await shoot(page, "services", "#/services", "#services-rows tr th");
    await shoot(page, "service", "#/services/redis", "#service-plans li strong");
    await shoot(page, "instances", "#/instances", "#instances-rows .status.up");
    await shoot(page, "instances-dark", "#/instances", "#instances-rows .status.up", true);
    // The plan chooser, and a name the platform would refuse said beside its field.
    await page.evaluate(() => (location.hash = "#/instances?service=redis"));
    await page.waitForSelector('#instance-plan option[value="dedicated"]');
    await page.type("#instance-name", "9lives");
    await page.select("#instance-plan", "dedicated");
    await page.click("#instance-form button[type=submit]");
    await page.waitForSelector("#instance-name-error:not([hidden])");
    await (await page.$("#instance-form"))!.screenshot({ path: `${OUT}/instance-form.png` });
    console.log("wrote docs/console/instance-form.png");
    // The dedicated instance's page: its story, the bind's calls opened.
    await page.evaluate(() => (location.hash = "#/instances/redis/big"));
    await page.waitForSelector("#instance-story .exchange");
    await page.$$eval("#instance-story .exchange details", (all) => all.find((details) => details.querySelector("summary")?.textContent?.includes("bind-app"))?.setAttribute("open", ""));
    await shoot(page, "instance", "#/instances/redis/big", "#instance-story details[open]");
    await shoot(page, "instance-dark", "#/instances/redis/big", "#instance-story details[open]", true);
    // The shared instance's actions, memory called.
    await page.evaluate(() => (location.hash = "#/instances/redis/cache"));
    await page.waitForSelector('form.action[data-action="memory"]');
    await page.click('form.action[data-action="memory"] button[type=submit]');
    await page.waitForFunction(() => document.querySelector('form.action[data-action="memory"] pre.answer')?.textContent?.startsWith("HTTP "));
    await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: "light" }]);
    await (await page.$("#instance-actions"))!.screenshot({ path: `${OUT}/actions.png` });
    console.log("wrote docs/console/actions.png");
    // A phone's width: the rows become cards.
    await page.setViewport({ width: 375, height: 800 });
    await shoot(page, "instances-narrow", "#/instances", "#instances-rows .status.up");
    await page.setViewport({ width: 1200, height: 800 });
    await page.evaluate(() => (location.hash = "#/apps/web"));
    await page.waitForSelector('button[aria-label="Show REDIS_URL"]');
    await page.click('button[aria-label="Show REDIS_URL"]');
    await page.click("#services-reveal");
    await page.type("#run-command", 'redis-cli --no-auth-warning -u "$REDIS_URL" ping');
    await page.click("#run-form button[type=submit]");
    await page.waitForFunction(() => document.getElementById("run-output")?.textContent?.includes("PONG"));
    await shoot(page, "apps", "#/apps/web", "#tsuru-services:not([hidden])");
    await page.evaluate(() => (location.hash = "#/calls"));
    await page.waitForSelector("#calls-rows .undo-group");
    // Open the newest bind-app call to show its request, answer and curl line.
    await page.$$eval("#calls-rows details", (all) => {
      const bind = all.find((details) => details.querySelector("summary")?.textContent?.includes("/resources/big/bind-app"));
      if (bind) (bind).open = true;
    });
    await shoot(page, "calls", "#/calls", "#calls-rows details[open]");
    await shoot(page, "calls-dark", "#/calls", "#calls-rows details[open]", true);
    await shoot(page, "log", "#/log/web", "#log-rows tr td");
  } finally {
    await browser.close();
    await platform.stop();
    await redis.stop();
    await flaky.stop();
    await removeDir(platformDir);
  }
}

await main();
