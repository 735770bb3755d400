/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * `npm run measure:console`: is the console still responsive with 1,000 instances and 10,000
 * recorded provider calls? Fills a platform (Redis store, a real redis-server) through the API
 * (1,000 creates, then 9,000 status calls), then drives the console in headless Chromium and
 * prints what it measured: time to show each page, the cost of one poll, and the longest task
 * the page's main thread ran while polling.
 */
import { launchBrowser } from "./browser.js";
import { ADMIN, manifest, startTestPlatform, startTestProvider, type Api } from "./helpers.js";

const INSTANCES = 1000;
const CALLS = 10_000;
const PARALLEL = 20;

async function inParallel(count: number, work: (index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < count) await work(next++);
  }));
}

async function median(times: number, work: () => Promise<unknown>): Promise<number> {
  const taken: number[] = [];
  for (let index = 0; index < times; index++) {
    const started = performance.now();
    await work();
    taken.push(performance.now() - started);
  }
  return taken.sort((a, b) => a - b)[Math.floor(times / 2)]!;
}

async function fill(api: Api): Promise<void> {
  await inParallel(INSTANCES, (index) => api.ok(api.post("/services/instances", { json: { name: `load-${index}`, service_name: "kv" } }), 201));
  await inParallel(CALLS - INSTANCES, (index) => api.ok(api.get(`/services/instances/load-${index % INSTANCES}/status`)));
}

async function main(): Promise<void> {
  const t = await startTestPlatform("redis");
  const provider = await startTestProvider();
  const browser = await launchBrowser();
  try {
    await t.admin.ok(t.admin.post("/services", { text: manifest("kv", provider.running.url) }));
    const filling = performance.now();
    await fill(t.admin);
    const total = (await t.admin.get("/provider-calls?limit=1")).headers.get("x-total-count");
    console.log(`filled: ${INSTANCES} instances, ${total} recorded calls in ${((performance.now() - filling) / 1000).toFixed(0)} s`);

    const onePage = await median(21, () => t.admin.ok(t.admin.get("/provider-calls?limit=50")));
    const everything = await median(5, () => t.admin.ok(t.admin.get("/provider-calls")));
    const pageBytes = (await t.admin.get("/provider-calls?limit=50")).text.length;
    const allBytes = (await t.admin.get("/provider-calls")).text.length;
    const list = await median(21, () => t.admin.ok(t.admin.get("/services/instances")));

    const page = await browser.browser.newPage();
    await page.setViewport({ width: 1200, height: 800 });
    await page.goto(`${t.url}/`);
    await page.evaluate(() => {
      (window as unknown as { longest: number }).longest = 0;
      new PerformanceObserver((entries) => {
        for (const entry of entries.getEntries()) {
          const state = window as unknown as { longest: number };
          state.longest = Math.max(state.longest, entry.duration);
        }
      }).observe({ type: "longtask", buffered: true });
    });
    await page.type("#login-email", ADMIN.email);
    await page.type("#login-password", ADMIN.password);
    await page.click("#login-form button[type=submit]");
    await page.waitForSelector("#services-rows th");

    const shown = async (hash: string, ready: () => boolean) => {
      const started = performance.now();
      await page.evaluate((wanted) => (location.hash = wanted), hash);
      await page.waitForFunction(ready, { polling: 10, timeout: 60_000 });
      return performance.now() - started;
    };
    const instancesMs = await shown("#/instances", () => document.querySelectorAll("#instances-rows .status").length === 25);
    const pages = await page.$eval("#instances-pager span", (span) => span.textContent?.trim());
    const callsMs = await shown("#/calls", () => document.querySelectorAll("#calls-rows li.call").length === 50);
    const olderStarted = performance.now();
    const firstId = await page.$eval("#calls-rows time", (time) => time.getAttribute("datetime"));
    await page.click("#calls-pager button:last-child");
    await page.waitForFunction((before) => document.querySelector("#calls-rows time")?.getAttribute("datetime") !== before, { polling: 10 }, firstId);
    const olderMs = performance.now() - olderStarted;
    await page.click("#calls-pager button:first-child");
    // Let the page poll for 15 s (5 refreshes) on the calls page, then read its longest task.
    await new Promise((done) => setTimeout(done, 15_000));
    const longest = await page.evaluate(() => (window as unknown as { longest: number }).longest);
    const nodes = await page.evaluate(() => document.getElementsByTagName("*").length);

    console.log(`
| Measured (1,000 instances, ${total} calls, Redis store) | Figure |
|---|---|
| \`GET /provider-calls?limit=50\` (one poll of the timeline), median of 21 | ${onePage.toFixed(0)} ms, ${(pageBytes / 1024).toFixed(0)} KiB |
| \`GET /provider-calls\` (all of them, what an unpaged page would fetch), median of 5 | ${everything.toFixed(0)} ms, ${(allBytes / 1024 / 1024).toFixed(1)} MiB |
| \`GET /services/instances\` (the names of all 1,000), median of 21 | ${list.toFixed(0)} ms |
| Instances page shown (25 rows with their status; pager "${pages}") | ${instancesMs.toFixed(0)} ms |
| Provider calls page shown (50 calls) | ${callsMs.toFixed(0)} ms |
| "Older" page of calls shown | ${olderMs.toFixed(0)} ms |
| Longest main-thread task in the page, login to 15 s of polling | ${longest === 0 ? "none over 50 ms (the long-task threshold)" : `${longest.toFixed(0)} ms`} |
| Elements in the page | ${nodes} |`);
  } finally {
    await browser.close();
    await provider.stop();
    await t.stop();
  }
}

await main();
