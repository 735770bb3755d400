/**
 * A provider loads only what it uses, so that it starts fast: node-redis (~700 modules, a third of
 * a compiled provider's start-up) when a Redis client is created, not because it imports
 * `RedisStore` from @provider-kit/redis-store.
 * Checked in a fresh Node process, as a service author's provider runs: import the package's
 * index, serve real calls, then read which packages Node has loaded.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, expect, it } from "vitest";
import { run } from "../../../../test/support/processes.js";

const root = path.resolve(import.meta.dirname, "../..");
let dir: string;

/** What the child saw: the packages loaded after each stage. */
interface Loaded {
  answers: number[];
  afterServing: string[];
  /** After a call with credentials spelled otherwise (`basic` in lower case). */
  afterOtherAuth: string[];
  afterRedisStore: string[];
}

// Packages are read from Node's module cache: every CommonJS module loaded (node-redis is one).
const SCRIPT = `
import { createRequire } from "node:module";
import { once } from "node:events";
const { createProvider, MemoryStore } = await import(${JSON.stringify(pathToFileURL(path.join(root, "src/index.ts")).href)});
const { RedisStore } = await import(${JSON.stringify(pathToFileURL(path.join(root, "../redis-store/src/index.ts")).href)});
const cache = createRequire(import.meta.url).cache;
const packages = () =>
  [...new Set(Object.keys(cache).map((file) => /.*node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]).filter(Boolean))].sort();

const provider = createProvider(
  { create: () => {}, destroy: () => {}, bindApp: () => ({ HOST: "h" }), unbindApp: () => {} },
  { auth: { usernames: ["u"], password: "p" }, registry: { store: new MemoryStore() } },
);
const server = provider.listen(0, "127.0.0.1");
await once(server, "listening");
const base = "http://127.0.0.1:" + server.address().port;
const headers = { authorization: "Basic " + Buffer.from("u:p").toString("base64"), "content-type": "application/x-www-form-urlencoded" };
const answers = [];
for (const [method, path, body] of [
  ["GET", "/healthcheck"],
  ["POST", "/resources", "name=db1&team=t"],
  ["POST", "/resources/db1/bind-app", "app-name=a1&app-host=a1.example.com"],
  ["GET", "/resources/db1/status"],
]) {
  answers.push((await fetch(base + path, { method, headers, body })).status);
}
const afterServing = packages();
const otherSpelling = "basic " + Buffer.from("u:p").toString("base64");
answers.push((await fetch(base + "/resources/db1/status", { headers: { authorization: otherSpelling } })).status);
const afterOtherAuth = packages();
server.close();
await provider.close();

const store = new RedisStore({ url: "redis://127.0.0.1:1" }); // never connects: a client is created, no call made
await store.close();
process.stderr.write("LOADED " + JSON.stringify({ answers, afterServing, afterOtherAuth, afterRedisStore: packages() }) + "\\n");
`;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "provider-kit-lazy-"));
  await writeFile(path.join(dir, "provider.mjs"), SCRIPT);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

it("a provider loads node-redis only for a RedisStore", async () => {
  const result = await run("node", ["--conditions=source", "--import", "tsx", path.join(dir, "provider.mjs")], { cwd: root });
  expect(result.code, result.stderr).toBe(0);
  const line = result.stderr.split("\n").find((text) => text.startsWith("LOADED "));
  expect(line, result.stderr).toBeDefined();
  const loaded = JSON.parse(line!.slice("LOADED ".length)) as Loaded;

  expect(loaded.answers).toEqual([200, 201, 201, 204, 204]);
  expect(loaded.afterServing).toEqual(expect.arrayContaining(["express", "pino", "prom-client"])); // the check sees what is loaded
  expect(loaded.afterServing).not.toContain("@redis/client");
  expect(loaded.afterOtherAuth).not.toContain("@redis/client");
  expect(loaded.afterRedisStore).toContain("@redis/client");
});
