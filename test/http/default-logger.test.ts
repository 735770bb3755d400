/**
 * The default logger batches its writes: these prove that batching loses nothing an operator
 * reads. A quiet provider's line still shows up promptly, and a line still in the batch when
 * the process exits is written out.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { eventually } from "./helpers.js";

const FIXTURE = fileURLToPath(new URL("./fixtures/default-logger.ts", import.meta.url));
const AUTH = `Basic ${Buffer.from("redis:s3cret").toString("base64")}`;

interface Started {
  child: ChildProcess;
  port: number;
  /** Everything the process wrote to stdout (its log) so far. */
  stdout(): string;
}

const children: ChildProcess[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function startProvider(env: Record<string, string> = {}): Promise<Started> {
  const child = spawn(process.execPath, ["--import", "tsx", FIXTURE], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
  children.push(child);
  let out = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => (out += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the provider exited (${code}) before listening`)));
    createInterface({ input: child.stderr! }).once("line", (line) => resolve((JSON.parse(line) as { port: number }).port));
  });
  return { child, port, stdout: () => out };
}

function requestLine(stdout: string, requestId: string): Record<string, unknown> | undefined {
  return stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .find((line) => line.requestId === requestId);
}

describe("the default logger (pino to stdout, batched)", { timeout: 60_000 }, () => {
  it("writes a quiet provider's request line within moments, with no more traffic and no exit", async () => {
    const provider = await startProvider();
    const answer = await fetch(`http://127.0.0.1:${provider.port}/resources/cache/status`, {
      headers: { Authorization: AUTH, "X-Request-ID": "quiet-1" },
    });
    expect(answer.status).toBe(204);
    await eventually(() => requestLine(provider.stdout(), "quiet-1") !== undefined, "the request's log line on stdout");
    expect(provider.child.exitCode).toBeNull();
    expect(requestLine(provider.stdout(), "quiet-1")).toMatchObject({ msg: "request", status: 204, route: "/resources/:instance/status" });
  });

  it("writes out the lines still in the batch when the process exits", async () => {
    const provider = await startProvider({ EXIT_AFTER_ANSWER: "1" });
    // 'close' comes once the process exited and its stdout is drained.
    const closed = new Promise<number | null>((resolve) => provider.child.once("close", resolve));
    await fetch(`http://127.0.0.1:${provider.port}/resources/cache/status`, {
      headers: { Authorization: AUTH, "X-Request-ID": "last-words" },
    }).catch(() => undefined); // the process may exit before the answer is fully read
    expect(await closed).toBe(0);
    expect(requestLine(provider.stdout(), "last-words")).toMatchObject({ msg: "request", status: 204 });
  });
});
