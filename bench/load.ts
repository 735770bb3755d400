/** Load one server with one call through autocannon, in this (the harness's) process. */
import autocannon from "autocannon";
import type { Call } from "./calls.js";

export interface Measurement {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** Answers other than 2xx, connection errors and timeouts: any of them breaks the run. */
  non2xx: number;
  errors: number;
  timeouts: number;
}

/**
 * How much load: for a time, or a number of requests each with a body of its own (`body(i)`, i
 * from 0; the call's own body when absent).
 */
export type Amount = { seconds: number } | { requests: number; body?: (index: number) => string };

export interface LoadOptions {
  /** Seconds an answer may take before it counts as a timeout (autocannon's default: 10). */
  timeoutSeconds?: number;
  /** Gets each 2xx answer's latency in ms, unrounded: autocannon's own percentiles are whole milliseconds. */
  onLatency?: (ms: number) => void;
}

export async function load(baseUrl: string, call: Call, amount: Amount, connections: number, options: LoadOptions = {}): Promise<Measurement> {
  const common = {
    url: baseUrl + call.path,
    method: call.method,
    headers: call.headers,
    connections,
    pipelining: 1,
    ...(options.timeoutSeconds === undefined ? {} : { timeout: options.timeoutSeconds }),
  };
  let next = 0;
  const started = Date.now();
  let lastAnswer = started;
  const settings: autocannon.Options =
    "seconds" in amount
      ? { ...common, body: call.body, duration: amount.seconds }
      : {
          ...common,
          amount: amount.requests,
          ...(amount.body === undefined
            ? { body: call.body }
            : {
                requests: [
                  {
                    setupRequest: (request) => {
                      return { ...request, body: amount.body!(next++) };
                    },
                  },
                ],
              }),
        };
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(settings, (error, done) => (error ? reject(error as Error) : resolve(done)));
    const { onLatency } = options;
    instance.on("response", (_client, status, _bytes, ms) => {
      lastAnswer = Date.now();
      if (onLatency && status >= 200 && status < 300) onLatency(ms);
    });
  });
  // autocannon notices that a fixed number of requests is done only at its next 1 s tick, so its
  // duration for them is rounded up to whole seconds: time them to the last answer instead.
  const seconds = "seconds" in amount ? result.duration : Math.max(lastAnswer - started, 1) / 1000;
  return {
    // Total over the real elapsed time: exact for short slices, where per-second samples are few.
    requestsPerSecond: result.requests.total / seconds,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** Why a measurement cannot be trusted, or undefined when it is clean. */
export function brokenBecause(measurement: Measurement): string | undefined {
  const { non2xx, errors, timeouts, requests } = measurement;
  if (requests === 0) return "no request completed";
  if (non2xx + errors + timeouts === 0) return undefined;
  return `${non2xx} non-2xx answers, ${errors} errors, ${timeouts} timeouts out of ${requests} requests`;
}
