/**
 * The platform's calls to providers: built by the shared provider client exactly as the real
 * platform sends them, sent to the endpoint of the cluster the call's pool runs on, recorded
 * (credentials and bind values masked) for `GET /provider-calls`, and shown on the terminal one
 * line each.
 */
import type { PlacementHeaders } from "../../contract.js";
import { providerCalls } from "../../provider-client/calls.js";
import { PlatformClient, type Call, type CallResult } from "../../provider-client/client.js";
import type { PlatformStore } from "../store/store.js";
import { clusterOf, placementOf, type PlatformConfig } from "./config.js";
import { currentOperation } from "./operation.js";
import type { ProviderCall, Service } from "./model.js";

export interface CallTarget {
  service: Service;
  instance?: string;
  app?: string;
  /** The pool of the call's instance (multi-cluster services), or the pool plans are asked for. */
  pool?: string;
}

export interface CallFilter {
  service?: string;
  instance?: string;
  app?: string;
}

export interface ProviderCallOptions {
  /** Where the one-line summaries go (the terminal); absent: nowhere. */
  print?: (line: string) => void;
  /** Limit on one whole call. Default 5 minutes, as the platform. */
  timeoutMs?: number;
  connectTimeoutMs?: number;
}

/** Enough for a long debugging session; the console pages through them. */
const KEPT_CALLS = 10_000;
const ALL = "all";

export class Providers {
  constructor(
    private readonly store: PlatformStore,
    private readonly config: PlatformConfig,
    private readonly options: ProviderCallOptions = {},
  ) {}

  /** The calls the platform makes to this service's provider, on behalf of `user`. */
  builder(service: Service, user: string) {
    return providerCalls({ variant: service.variant, event: { user }, modernFields: service.variant === "current" });
  }

  /**
   * Sends one call; never throws for HTTP or network failures (the caller words them). A health
   * probe (`record: false`) stays out of the timeline and off the terminal. `timeoutMs` shortens
   * the limit for a call something waits on (a listing).
   */
  async send(target: CallTarget, call: Call, { record: recorded = true, timeoutMs = Infinity } = {}): Promise<CallResult> {
    const { service } = target;
    const { url, placement } = this.route(service, target.pool);
    const client = new PlatformClient({
      url,
      username: service.username,
      password: service.password,
      // Only today's platform knows the JSON encoding.
      encoding: service.variant === "current" ? service.encoding : "form",
      requestIdHeader: "X-Request-ID",
      requestIdPrefix: "platform",
      timeoutMs: Math.min(timeoutMs, this.options.timeoutMs ?? 5 * 60_000),
      connectTimeoutMs: this.options.connectTimeoutMs,
    });
    // Only the instance's pool puts X-Tsuru-* headers on a call; an app's placement travels in fields.
    const result = withoutCredentials(await client.send({ ...call, placement }), service);
    if (!recorded) return result;
    const { exchange } = result;
    const record: ProviderCall = {
      id: await this.store.next("provider-calls"),
      at: new Date().toISOString(),
      service: service.name,
      instance: target.instance,
      app: target.app,
      method: exchange.method,
      path: exchange.path,
      url: client.url,
      requestHeaders: exchange.requestHeaders,
      requestBody: exchange.requestBody,
      status: exchange.response?.status,
      answer: exchange.response?.body,
      error: exchange.error,
      durationMs: Math.round(result.durationMs),
      curl: result.curl,
      ...currentOperation(),
    };
    await this.store.append("calls", ALL, record, KEPT_CALLS);
    this.options.print?.(summary(record));
    return result;
  }

  /**
   * Where a call about an instance in `pool` goes, and the headers saying where it lives: the
   * endpoint named after the pool's cluster when the service has one, else `production`.
   */
  private route(service: Service, pool: string | undefined): { url: string; placement?: PlacementHeaders } {
    if (pool === undefined) return { url: service.endpoint };
    const cluster = clusterOf(this.config, pool);
    const kubeConfig = service.receivesKubeConfig ? cluster?.propagatedKubeConfig : undefined;
    return {
      url: (cluster && service.clusterEndpoints?.[cluster.name]) ?? service.endpoint,
      placement: {
        ...placementOf(this.config, pool),
        ...(kubeConfig ? { clusterKubeConfig: Buffer.from(JSON.stringify(kubeConfig)).toString("base64") } : {}),
      },
    };
  }

  async list(filter: CallFilter): Promise<ProviderCall[]> {
    const calls = await this.store.items("calls", ALL);
    return calls.filter(
      (call) =>
        (filter.service === undefined || call.service === filter.service) &&
        (filter.instance === undefined || call.instance === filter.instance) &&
        (filter.app === undefined || call.app === filter.app),
    );
  }
}

const REDACTED = "<redacted>";

/**
 * The result with the credentials the platform sent replaced wherever the provider's answer (or
 * the failure) repeats them: a provider that echoes its request must not put them in a message,
 * the timeline, the health check or the terminal.
 */
function withoutCredentials(result: CallResult, service: Service): CallResult {
  const secrets = [Buffer.from(`${service.username}:${service.password}`).toString("base64"), Buffer.from(service.password).toString("base64"), service.password]
    .filter((secret) => secret.length >= 4);
  const redact = (text: string) => secrets.reduce((clean, secret) => clean.replaceAll(secret, REDACTED), text);
  const { exchange, answer, error } = result;
  return {
    ...result,
    exchange: {
      ...exchange,
      ...(exchange.response ? { response: { ...exchange.response, body: redact(exchange.response.body) } } : {}),
      ...(exchange.error !== undefined ? { error: redact(exchange.error) } : {}),
    },
    ...(answer ? { answer: { ...answer, body: redact(answer.body) } } : {}),
    ...(error !== undefined ? { error: redact(error) } : {}),
  };
}

/** `12:00:01 redis POST /resources/cache/bind-app -> 201 (12 ms) {"REDIS_URL":<string>}` */
function summary(call: ProviderCall): string {
  const time = call.at.slice(11, 19);
  const outcome = call.status === undefined ? `failed: ${call.error}` : String(call.status);
  const answer = call.answer ? ` ${call.answer.replace(/\s+/g, " ").slice(0, 120)}` : "";
  return `${time} provider ${call.service}: ${call.method} ${call.path} -> ${outcome} (${call.durationMs} ms)${answer}`;
}
