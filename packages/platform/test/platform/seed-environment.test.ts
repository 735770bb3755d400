/** A seed file reads `${NAME}` and `${NAME:-default}` from the environment: where its providers listen is the user's choice. */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { readSeed } from "../../src/platform/seed.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "provider-kit-seed-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function seedWith(endpoint: string): Promise<string> {
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `services:\n  - id: redis\n    password: s3cret\n    endpoint:\n      production: ${endpoint}\n`);
  return file;
}

it("takes the variable's value, or the default when it is unset or empty", async () => {
  const file = await seedWith("http://127.0.0.1:${PKT_SEED_TEST_PORT:-42080}");
  const endpointOf = async () => (await readSeed(file)).services[0]?.endpoint;
  expect(await endpointOf()).toEqual({ production: "http://127.0.0.1:42080" });
  process.env.PKT_SEED_TEST_PORT = "43080";
  try {
    expect(await endpointOf()).toEqual({ production: "http://127.0.0.1:43080" });
  } finally {
    delete process.env.PKT_SEED_TEST_PORT;
  }
});

it("refuses a variable that is unset and has no default, saying which and how to give it", async () => {
  const file = await seedWith("http://127.0.0.1:${PKT_SEED_TEST_UNSET}");
  await expect(readSeed(file)).rejects.toThrow(`The seed file ${file} reads \${PKT_SEED_TEST_UNSET}, which is not set: set PKT_SEED_TEST_UNSET, or write \${PKT_SEED_TEST_UNSET:-<default>} in the seed.`);
});
