/**
 * A real headless Chromium (Debian's `chromium` package) driven by puppeteer-core, for the
 * console's browser test and screenshots. This machine and CI have no internet: the flags keep
 * Chromium from reaching out, and each launch gets a fresh profile.
 */
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

const CHROMIUM = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

export interface TestBrowser {
  browser: Browser;
  close(): Promise<void>;
}

/** `extraArgs`: more Chromium flags, e.g. `--host-resolver-rules` to point a test host name at loopback. */
export async function launchBrowser(extraArgs: string[] = []): Promise<TestBrowser> {
  if (!existsSync(CHROMIUM)) throw new Error(`No Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM_BIN.`);
  const profile = await mkdtemp(join(tmpdir(), "console-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      `--user-data-dir=${profile}`,
      ...extraArgs,
    ],
  });
  return {
    browser,
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
