/**
 * A flood of large proxied calls against the platform's process and its embedded Redis: each
 * record and the whole timeline stay bounded, the timeline pages from the store, and the
 * platform serves it again after a restart.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ProviderCall } from "../../src/platform/domain/model.js";
import { RECORD_BYTES, TIMELINE } from "../../src/platform/domain/provider-calls.js";
import { removeDir, startPlatformProcess, type PlatformProcess } from "../../../../test/support/redis-example.js";
import { manifest } from "./helpers.js";
import { ok, rawProvider } from "./raw-provider.js";

/** Resident memory of a process, from /proc. */
async function rssMiB(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Math.round(Number(/^VmRSS:\s+(\d+) kB/m.exec(status)![1]) / 1024);
}

describe("a flood of large proxied calls (the platform's process, its embedded Redis)", () => {
  // More than a page of the timeline, each body far over what a record keeps.
  const POSTS = 60;
  const BODY_BYTES = 1_000_000;
  let provider: Awaited<ReturnType<typeof rawProvider>>;
  let dataDir: string;
  let platform: PlatformProcess | undefined;
  beforeAll(async () => {
    provider = await rawProvider((_req, res) => ok(res));
    dataDir = await mkdtemp(join(tmpdir(), "platform-flood-"));
  });
  afterAll(async () => {
    await platform?.stop();
    await provider.stop();
    await removeDir(dataDir);
  });

  it("keeps each record and the whole timeline bounded, pages from the store, and serves again after a restart", async () => {
    platform = await startPlatformProcess(dataDir);
    const admin = platform.api;
    await admin.ok(admin.post("/services", { text: manifest("kv", provider.url) }));
    const mallory = await admin.user("mallory@example.com");
    const before = await rssMiB(platform.process.pid);

    const body = "x".repeat(BODY_BYTES);
    let sent = 0;
    const sender = async () => {
      while (sent < POSTS) {
        sent++;
        await mallory.ok(mallory.post(`/1.21/services/kv/authenticated-resources/upload/${sent}`, { text: body }));
      }
    };
    // Fewer at once than the per-user cap: every post is a call the timeline must take.
    await Promise.all([sender(), sender(), sender(), sender()]);
    // Long where the body is not: the path and a header.
    const long = "z".repeat(6000);
    await mallory.ok(mallory.post(`/1.21/services/kv/authenticated-resources/${long}`, { text: "x", headers: { "Content-Type": `text/${long}` } }));
    const afterFlood = await rssMiB(platform.process.pid);

    const page = await admin.ok(admin.get("/provider-calls?limit=50"));
    expect(page.json<ProviderCall[]>()).toHaveLength(50);
    expect(Number(page.headers.get("X-Total-Count"))).toBeGreaterThanOrEqual(POSTS);
    const all = (await admin.ok(admin.get("/provider-calls"))).json<ProviderCall[]>();
    const upload = all.find((call) => call.path === "/authenticated-resources/upload/1")!;
    expect(upload.curl).toMatch(/… \(\d+ more characters\)'/);
    for (const call of all) expect(JSON.stringify(call).length).toBeLessThanOrEqual(RECORD_BYTES);
    expect(all.reduce((bytes, call) => bytes + JSON.stringify(call).length, 0)).toBeLessThanOrEqual(TIMELINE.bytes);

    await platform.stop();
    platform = await startPlatformProcess(dataDir);
    const restarted = platform.api;
    const again = await restarted.ok(restarted.get("/provider-calls?limit=50"));
    expect(again.json<ProviderCall[]>().map((call) => call.path)).toContain(`/authenticated-resources/upload/${POSTS}`);
    const afterRestart = await rssMiB(platform.process.pid);

    // Only the admin clears the timeline.
    const stranger = await restarted.login("mallory@example.com", "user-password");
    expect(await stranger.delete("/provider-calls")).toMatchObject({ status: 403, text: "Only the admin team may clear the provider call timeline." });
    await restarted.ok(restarted.delete("/provider-calls"), 204);
    const cleared = await restarted.ok(restarted.get("/provider-calls"));
    expect([cleared.json(), cleared.headers.get("X-Total-Count")]).toEqual([[], "0"]);
    console.log(`platform RSS: ${before} MiB before the flood, ${afterFlood} MiB after ${POSTS} posts of ${BODY_BYTES} bytes, ${afterRestart} MiB after a restart`);
  });
});

