/**
 * What operators read: `GET /healthcheck?check=all`, `GET /metrics` (parsed as Prometheus text)
 * and the request log lines, on a real provider over loopback HTTP.
 */
import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Registry } from "prom-client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryStore, ProviderError, type ProviderHandlers } from "../../src/index.js";
import { parsePrometheusText } from "../../../../test/support/prometheus.js";
import { fakeResource, FORM, GOOD_AUTH, requestLines, start, stopAll } from "../../../../test/support/fake-provider.js";
import { eventually } from "../../../../test/support/eventually.js";

afterEach(stopAll);

/** A registry-backed provider (memory store), quick to retry background steps. */
function withRegistry(handlers: ProviderHandlers, extra: Parameters<typeof start>[1] = {}) {
  return start(handlers, { registry: { store: new MemoryStore(), stepRetryDelayMs: 10, pollIntervalMs: 50, maxStepAttempts: 2 }, ...extra });
}

async function metricsOf(http: Awaited<ReturnType<typeof start>>["http"]) {
  const answer = await http.get("/metrics").set("Authorization", GOOD_AUTH);
  expect(answer.status).toBe(200);
  expect(answer.headers["content-type"]).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(answer.text);
}

describe("GET /healthcheck", () => {
  it("stays the cheap liveness answer: WORKING without touching any component", async () => {
    let checked = 0;
    const { http } = await withRegistry(fakeResource().handlers, { healthChecks: { cache: async () => void checked++ } });
    const answer = await http.get("/healthcheck");
    expect([answer.status, answer.text]).toEqual([200, "WORKING"]);
    expect(checked).toBe(0);
  });

  it("?check=all checks every component, the state store included, one line each, without credentials", async () => {
    const { http } = await withRegistry(fakeResource().handlers, { healthChecks: { cache: async () => "PONG" } });
    const answer = await http.get("/healthcheck?check=all");
    expect(answer.status).toBe(200);
    expect(answer.text).toMatch(/^state store: WORKING \(\d+\.\d{3}m?s\)\ncache: WORKING \(\d+\.\d{3}m?s\)\n$/);
  });

  it("answers 500 naming what failed and why, on one line per component", async () => {
    const { http } = await withRegistry(fakeResource().handlers, {
      healthChecks: {
        cache: async () => {
          throw new Error("connect ECONNREFUSED 127.0.0.1:6379\n    at TCPConnectWrap");
        },
        queue: () => new Promise(() => {}), // never answers
        search: async () => {},
      },
      healthCheckTimeoutMs: 200,
    });
    const answer = await http.get("/healthcheck?check=all");
    expect(answer.status).toBe(500);
    const lines = answer.text.trimEnd().split("\n");
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^state store: WORKING/);
    expect(lines[1]).toBe("cache: fail - connect ECONNREFUSED 127.0.0.1:6379 at TCPConnectWrap");
    expect(lines[2]).toBe("queue: fail - no answer within 200 ms");
    expect(lines[3]).toMatch(/^search: WORKING/);
  });

  it("refuses a health check that is not a function, at start-up", async () => {
    await expect(start(fakeResource().handlers, { healthChecks: { cache: "redis://x" as never } })).rejects.toThrow(
      /healthChecks\["cache"\] must be an async function/,
    );
  });
});

describe("GET /metrics", () => {
  it("is behind the API's auth", async () => {
    const { http } = await withRegistry(fakeResource().handlers);
    expect((await http.get("/metrics")).status).toBe(401);
  });

  it("counts requests by route, method and status, their durations, handler errors, instances and bindings", async () => {
    const { handlers } = fakeResource({
      status: async () => {
        throw new Error("the resource's driver crashed");
      },
    });
    const { http } = await withRegistry(handlers);
    const form = (path: string, body: string) => http.post(path).set("Authorization", GOOD_AUTH).type(FORM).send(body);
    expect((await form("/resources", "name=one&plan=small&team=t")).status).toBe(201);
    expect((await form("/resources", "name=two&plan=small&team=t")).status).toBe(201);
    expect((await form("/resources/one/bind-app", "app-name=web&app-host=web.example.com")).status).toBe(201);
    expect((await http.get("/resources/one/status").set("Authorization", GOOD_AUTH)).status).toBe(500);
    expect((await http.get("/nowhere").set("Authorization", GOOD_AUTH)).status).toBe(404);
    expect((await http.get("/resources/plans")).status).toBe(401);

    const metrics = await metricsOf(http);
    expect(metrics.types.get("provider_http_requests_total")).toBe("counter");
    expect(metrics.types.get("provider_http_request_duration_seconds")).toBe("histogram");
    expect(metrics.value("provider_http_requests_total", { route: "/resources", method: "POST", status: "201" })).toBe(2);
    expect(metrics.value("provider_http_requests_total", { route: "/resources/:instance/bind-app", method: "POST", status: "201" })).toBe(1);
    expect(metrics.value("provider_http_requests_total", { route: "/resources/:instance/status", method: "GET", status: "500" })).toBe(1);
    expect(metrics.value("provider_http_requests_total", { route: "none", method: "GET", status: "404" })).toBe(1);
    expect(metrics.value("provider_http_requests_total", { route: "/resources/plans", method: "GET", status: "401" })).toBe(1);
    expect(metrics.value("provider_http_request_duration_seconds_count", { route: "/resources", method: "POST" })).toBe(2);
    expect(metrics.value("provider_http_request_duration_seconds_bucket", { route: "/resources", method: "POST", le: "+Inf" })).toBe(2);
    expect(metrics.value("provider_handler_errors_total", { route: "/resources/:instance/status" })).toBe(1);
    expect(metrics.value("provider_instances", { state: "ready" })).toBe(2);
    expect(metrics.value("provider_instances", { state: "failed" })).toBe(0);
    expect(metrics.value("provider_bindings", { kind: "app" })).toBe(1);
    expect(metrics.value("provider_store_up")).toBe(1);
  });

  it("serves metrics of yours made with prom-client and registered in provider.metricsRegistry", async () => {
    const { http, provider } = await start(fakeResource().handlers);
    expect(provider.metricsRegistry).toBeInstanceOf(Registry);
    const cacheHits = new Counter({ name: "cache_hits_total", help: "Cache hits.", registers: [provider.metricsRegistry] });
    cacheHits.inc(3);
    const metrics = await metricsOf(http);
    expect(metrics.types.get("cache_hits_total")).toBe("counter");
    expect(metrics.value("cache_hits_total")).toBe(3);
  });

  it("counts background step runs, retries and failures", async () => {
    const { handlers } = fakeResource({
      create: async () => ({ pending: true }),
      provision: async () => {
        throw new ProviderError("the cloud is out of capacity");
      },
    });
    const { http } = await withRegistry(handlers);
    await http.post("/resources").set("Authorization", GOOD_AUTH).type(FORM).send("name=broken&team=t");
    // Two attempts (maxStepAttempts), then the instance is failed: its status answers 500.
    await vi.waitFor(async () => expect((await http.get("/resources/broken/status").set("Authorization", GOOD_AUTH)).status).toBe(500), {
      timeout: 10_000,
    });

    const metrics = await metricsOf(http);
    expect(metrics.value("provider_step_runs_total", { step: "provision" })).toBe(2);
    expect(metrics.value("provider_step_retries_total", { step: "provision" })).toBe(1);
    expect(metrics.value("provider_step_failures_total", { step: "provision" })).toBe(1);
    expect(metrics.value("provider_instances", { state: "failed" })).toBe(1);
  });

  it("is read by a parser that refuses what is not Prometheus text", () => {
    expect(() => parsePrometheusText("provider_up 1\n")).toThrow(/no # TYPE/);
    expect(() => parsePrometheusText("# TYPE provider_up gauge\nprovider_up{state=ready} 1\n")).toThrow(/Malformed sample/);
    expect(() => parsePrometheusText("# TYPE provider_up gauge\nprovider_up one\n")).toThrow(/Not a sample value/);
  });

  it("can be served on a port of its own instead of on the API", async () => {
    const { http, provider } = await withRegistry(fakeResource().handlers, { metricsRoute: false });
    expect((await http.get("/metrics").set("Authorization", GOOD_AUTH)).status).toBe(404);
    const own = createServer((req, res) => provider.serveMetrics(req, res)).listen(0, "127.0.0.1");
    await once(own, "listening");
    try {
      const answer = await fetch(`http://127.0.0.1:${(own.address() as AddressInfo).port}/metrics`);
      expect(answer.status).toBe(200);
      expect(parsePrometheusText(await answer.text()).value("provider_store_up")).toBe(1);
    } finally {
      own.close();
    }
  });
});

describe("request log lines", () => {
  it("carry the path on every answer, and the reason on a 4xx", async () => {
    const { http, logs } = await start(fakeResource().handlers);
    await http.get("/resources/plans");
    await http.get("/nowhere/at/all").set("Authorization", GOOD_AUTH);
    await http.get("/resources/ghost").set("Authorization", GOOD_AUTH);
    await eventually(() => requestLines(logs).length === 3, 10_000, "three request lines");
    const [unauthorized, unknownRoute, unknownInstance] = requestLines(logs);
    expect(unauthorized).toMatchObject({
      path: "/resources/plans",
      status: 401,
      reason: "Authentication required: send the service's user name and password with HTTP Basic auth.",
    });
    expect(unknownRoute).toMatchObject({ path: "/nowhere/at/all", status: 404, reason: "This provider has no route for GET /nowhere/at/all." });
    expect(unknownInstance).toMatchObject({ path: "/resources/ghost", route: "/resources/:instance", status: 404, reason: 'Instance "ghost" not found.' });
  });
});
