/**
 * The provider's Prometheus metrics (`GET /metrics`, README section "Metrics"). Each provider has
 * its own prom-client registry, so several providers in one process never mix their figures;
 * service authors add theirs to `provider.metricsRegistry`.
 *
 * Counted as things happen: requests, handler errors, background step runs, retries and
 * failures. Read from the store at each scrape: instances by state, bindings by kind, and
 * whether the store answers at all.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Store, StoreCensus } from "./lifecycle/store.js";
import type { PendingStep } from "./types.js";

/** Route label of calls no route matched (404, and 401: auth answers before routing). */
const NO_ROUTE = "none";

/** What the background step runner reports. */
export interface StepMetrics {
  /** An attempt starts. */
  run(step: PendingStep["kind"]): void;
  /** An attempt failed and another will follow. */
  retry(step: PendingStep["kind"]): void;
  /** The step failed for good (attempts or time limit spent). */
  failure(step: PendingStep["kind"]): void;
}

export interface ProviderMetrics {
  registry: Registry;
  /** One answered call; `failed`: it answered 5xx because of an error (a handler's, a store's). */
  request(method: string, route: string | undefined, status: number, seconds: number, failed: boolean): void;
  steps: StepMetrics;
  /** Adds the gauges read from the registry's store at each scrape. */
  observeStore(store: Store): void;
  /** Answers any request with the registry in the Prometheus text format. */
  serve(req: IncomingMessage, res: ServerResponse): void;
}

/** A name no instance can have (names start with a letter): reading it exercises the store without a hit. */
const PROBE_INSTANCE = "_provider-kit-probe";

/** Resolves when the store answers a read; the health check and `provider_store_up` use it. */
export async function probeStore(store: Store): Promise<void> {
  await store.getInstance(PROBE_INSTANCE);
}

/** Replaces every series of `gauge` with `counts`; none (no census, or it failed): no series. */
function setAll<L extends string>(gauge: Gauge<L>, label: L, counts: Record<string, number> = {}): void {
  gauge.reset();
  for (const [value, count] of Object.entries(counts)) gauge.set({ [label]: value } as Partial<Record<L, string>>, count);
}

export function createMetrics(): ProviderMetrics {
  const registry = new Registry();
  const requests = new Counter({
    name: "provider_http_requests_total",
    help: "HTTP calls answered, by route pattern, method and status.",
    labelNames: ["route", "method", "status"] as const,
    registers: [registry],
  });
  const durations = new Histogram({
    name: "provider_http_request_duration_seconds",
    help: "Time to answer an HTTP call, by route pattern and method.",
    labelNames: ["route", "method"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const handlerErrors = new Counter({
    name: "provider_handler_errors_total",
    help: "Calls that answered 5xx because of an error (handler, store, timeout), by route pattern.",
    labelNames: ["route"] as const,
    registers: [registry],
  });
  const stepCounter = (name: string, help: string) =>
    new Counter({ name, help, labelNames: ["step"] as const, registers: [registry] });
  const stepRuns = stepCounter("provider_step_runs_total", "Background step attempts started, by step (provision, deprovision).");
  const stepRetries = stepCounter("provider_step_retries_total", "Background step attempts that failed and will be retried.");
  const stepFailures = stepCounter("provider_step_failures_total", "Background steps that failed for good (the instance is failed).");

  function observeStore(store: Store): void {
    // Both gauges are collected concurrently at a scrape: they share one census.
    let census: Promise<StoreCensus | undefined> | undefined;
    const takeCensus = () =>
      (census ??= Promise.resolve(store.census?.())
        .catch(() => undefined)
        .finally(() => (census = undefined)));
    const instances: Gauge<"state"> = new Gauge({
      name: "provider_instances",
      help: "Instances in the registry, by state.",
      labelNames: ["state"] as const,
      registers: [registry],
      async collect() {
        setAll(instances, "state", (await takeCensus())?.instances);
      },
    });
    const bindings: Gauge<"kind"> = new Gauge({
      name: "provider_bindings",
      help: "Bindings in the registry, by kind (app, unit, job).",
      labelNames: ["kind"] as const,
      registers: [registry],
      async collect() {
        setAll(bindings, "kind", (await takeCensus())?.bindings);
      },
    });
    const storeUp: Gauge = new Gauge({
      name: "provider_store_up",
      help: "1 when the registry's store answered at this scrape, 0 when it did not.",
      registers: [registry],
      async collect() {
        storeUp.set(await probeStore(store).then(() => 1, () => 0));
      },
    });
  }

  return {
    registry,
    observeStore,
    request(method, route = NO_ROUTE, status, seconds, failed) {
      requests.inc({ route, method, status });
      durations.observe({ route, method }, seconds);
      if (failed) handlerErrors.inc({ route });
    },
    steps: {
      run: (step) => stepRuns.inc({ step }),
      retry: (step) => stepRetries.inc({ step }),
      failure: (step) => stepFailures.inc({ step }),
    },
    serve(_req, res) {
      registry.metrics().then(
        (text) => {
          res.writeHead(200, { "Content-Type": registry.contentType });
          res.end(text);
        },
        () => {
          res.writeHead(500, { "Content-Type": "text/plain; charset=utf-8" });
          res.end("The metrics could not be collected; try again in a moment.");
        },
      );
    },
  };
}
