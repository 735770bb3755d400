/**
 * `GET /healthcheck`, before auth: load balancers and the platform probe it bare.
 * - plain: 200 `WORKING`, the cheap liveness answer (no component is touched);
 * - `?check=all`: every component checked, one line each, `<name>: WORKING (<duration>)` or
 *   `<name>: fail - <error>`; 500 when any fails. Concurrent probes share one run, so callers
 *   without credentials cannot multiply the work done on the components.
 */
import { performance } from "node:perf_hooks";
import { sendText } from "./answer.js";
import type { RouteHandler } from "./router.js";

export const HEALTHCHECK_PATH = "/healthcheck";

/** Resolves when the component works; rejects (its message is shown) when it does not. */
export type HealthCheck = () => Promise<unknown>;

interface Report {
  ok: boolean;
  text: string;
}

function duration(ms: number): string {
  return ms < 1_000 ? `${ms.toFixed(3)}ms` : `${(ms / 1_000).toFixed(3)}s`;
}

function withTimeout(check: HealthCheck, timeoutMs: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  return Promise.race([Promise.resolve().then(check), timeout]).finally(() => clearTimeout(timer));
}

async function line(name: string, check: HealthCheck, timeoutMs: number): Promise<{ ok: boolean; line: string }> {
  const startedAt = performance.now();
  try {
    await withTimeout(check, timeoutMs);
    return { ok: true, line: `${name}: WORKING (${duration(performance.now() - startedAt)})` };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // One line per component: a multi-line error must not look like another component.
    return { ok: false, line: `${name}: fail - ${message.replace(/\s+/g, " ").trim() || "failed"}` };
  }
}

function checksAll(url: string): boolean {
  const query = url.indexOf("?");
  return query !== -1 && new URLSearchParams(url.slice(query + 1)).get("check") === "all";
}

/** The route's handler; the route table serves it before auth. */
export function healthcheck(checks: ReadonlyArray<readonly [name: string, check: HealthCheck]>, timeoutMs: number): RouteHandler {
  let running: Promise<Report> | undefined;
  const runAll = () =>
    (running ??= Promise.all(checks.map(([name, check]) => line(name, check, timeoutMs)))
      .then((lines) => ({
        ok: lines.every((result) => result.ok),
        text: lines.length === 0 ? "WORKING" : `${lines.map((result) => result.line).join("\n")}\n`,
      }))
      .finally(() => (running = undefined)));

  return (req, res, next) => {
    if (!checksAll(req.url ?? "")) return sendText(res, 200, "WORKING");
    runAll().then(
      (report) => sendText(res, report.ok ? 200 : 500, report.text),
      (error: unknown) => next(error),
    );
  };
}
