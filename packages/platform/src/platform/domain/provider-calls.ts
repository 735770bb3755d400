/**
 * The platform's calls to providers: built by the shared provider client exactly as the real
 * platform sends them, sent to the endpoint of the cluster the call's pool runs on, recorded
 * (credentials and bind values masked) for `GET /provider-calls`, and shown on the terminal one
 * line each.
 */
import type { PlacementHeaders } from "provider-kit/contract";
import { providerCalls } from "provider-kit/contract";
import { cut, PlatformClient, redactSecretBytes, redactSecrets, tokenForms, type Call, type CallResult } from "provider-kit/contract";
import type { CallEntry, PlatformStore, TimelineBounds } from "../store/store.js";
import { clusterOf, placementOf, type PlatformConfig } from "./config.js";
import { currentOperation } from "./operation.js";
import { brokerCall } from "./broker-client.js";
import { sendOsb as sendOsbRequest, type OsbRequest } from "./osb-send.js";
import type { PlatformCallResult } from "./provider-answer.js";
import type { Broker, BrokerService, ProviderCall, Service } from "./model.js";

export interface CallTarget {
  service: Service;
  instance?: string;
  app?: string;
  /** The pool of the call's instance (multi-cluster services), or the pool plans are asked for. */
  pool?: string;
  /** A proxied call's sender's teams: who may see a call about no instance or app. */
  senderTeams?: string[];
}

export interface CallFilter {
  service?: string;
  instance?: string;
  app?: string;
}

/** One page of the timeline: the newest `limit` calls below the id `before`, oldest first. */
export interface CallPage {
  limit?: number;
  before?: number;
}

export interface ProviderCallOptions {
  /** Where the one-line summaries go (the terminal); absent: nowhere. */
  print?: (line: string) => void;
  /** Limit on one whole call. Default 5 minutes, as the platform. */
  timeoutMs?: number;
  connectTimeoutMs?: number;
  /** Bounds on the calls users send through the proxy. */
  proxy?: Partial<ProxyLimits>;
}

export interface ProxyLimits {
  /** Limit on one proxied call (a user waits on it; the platform's own calls may take longer). */
  timeoutMs: number;
  /** Proxied calls one user may have in flight at once. */
  perUser: number;
}

const PROXY_LIMITS: ProxyLimits = { timeoutMs: 60_000, perUser: 8 };

/**
 * The timeline's bounds: enough for a long debugging session (the console pages through it),
 * small enough that no caller can fill the platform's memory. A record holds at most about
 * `RECORD_BYTES`: bodies and answers are cut (with a marker saying how much was left out).
 */
export const TIMELINE: TimelineBounds = { calls: 10_000, bytes: 16 << 20 };
export const RECORD_BYTES = 16 << 10;
/** What one record keeps of each part (characters). */
const KEPT = { curlBody: 4096, curl: 6144, path: 2048, header: 512, error: 2048, answer: 300 } as const;

export class Providers {
  readonly proxyLimits: ProxyLimits;

  constructor(
    private readonly store: PlatformStore,
    private readonly config: PlatformConfig,
    private readonly options: ProviderCallOptions = {},
  ) {
    this.proxyLimits = { ...PROXY_LIMITS, ...options.proxy };
  }

  /** The calls the platform makes to this service's provider, on behalf of `user`. */
  builder(service: Service, user: string) {
    return providerCalls({ variant: service.variant, event: { user }, modernFields: service.variant === "current" });
  }

  /**
   * Sends one call; never throws for HTTP or network failures (the caller words them). A health
   * probe (`record: false`) stays out of the timeline and off the terminal. `timeoutMs` shortens
   * the limit for a call something waits on (a listing).
   */
  async send(
    target: CallTarget,
    call: Call,
    { record: recorded = true, timeoutMs = Infinity, signal }: { record?: boolean; timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<PlatformCallResult> {
    const { service } = target;
    if (service.broker) return this.sendToBroker(target, service.broker, call, { record: recorded, timeoutMs });
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
      curlBodyChars: KEPT.curlBody,
    });
    // Only the instance's pool puts X-Tsuru-* headers on a call; an app's placement travels in fields.
    const result = withoutCredentials(await client.send({ ...call, placement }, signal), placement?.clusterKubeConfig);
    if (recorded) await this.keep(target, result, client.url, call.secretAnswer === true);
    return result;
  }

  /**
   * A call to a broker's service: the native call made as OSB calls to the broker (broker-client.ts),
   * each of them kept in the timeline as a provider call is.
   */
  private sendToBroker(target: CallTarget, broker: BrokerService, call: Call, options: { record?: boolean; timeoutMs?: number }): Promise<PlatformCallResult> {
    return brokerCall(broker, call, { store: this.store, user: call.event?.user, send: (request) => this.sendOsb(target, broker.broker, request, options) });
  }

  /** One OSB request to `broker`, kept in the timeline under the target's service unless `record` is false. */
  async sendOsb(target: CallTarget, broker: Broker, request: OsbRequest, { record = true, timeoutMs = Infinity }: { record?: boolean; timeoutMs?: number } = {}): Promise<CallResult> {
    const { result, url } = await sendOsbRequest(broker, request, Math.min(timeoutMs, this.options.timeoutMs ?? 5 * 60_000));
    if (record) await this.keep(target, result, url, request.secretAnswer === true);
    return result;
  }

  /** Adds one call to the timeline (and its summary to the terminal). */
  private async keep(target: CallTarget, result: CallResult, url: string, secretAnswer: boolean): Promise<void> {
    const { exchange } = result;
    const entry: CallEntry = {
      id: await this.store.next("provider-calls"),
      service: target.service.name,
      instance: target.instance,
      app: target.app,
      ...(target.senderTeams ? { senderTeams: target.senderTeams } : {}),
    };
    // A bind answer is already reduced to its shape; any other may hold secrets too (an action's new password).
    const answer = exchange.response && (secretAnswer ? exchange.response.body : cut(maskSecrets(result.answer?.body ?? ""), KEPT.answer));
    const record: ProviderCall = {
      id: entry.id,
      at: new Date().toISOString(),
      service: target.service.name,
      instance: target.instance,
      app: target.app,
      method: exchange.method,
      path: cut(exchange.path, KEPT.path),
      url,
      requestHeaders: Object.fromEntries(
        Object.entries(exchange.requestHeaders).map(([name, value]) => [name, typeof value === "string" ? cut(value, KEPT.header) : value.map((item) => cut(item, KEPT.header))]),
      ),
      requestBody: exchange.requestBody,
      status: exchange.response?.status,
      answer,
      error: exchange.error === undefined ? undefined : cut(exchange.error, KEPT.error),
      durationMs: Math.round(result.durationMs),
      // Its body is cut already, so the line stays a command; a long path or header cuts the line itself.
      curl: cut(maskSecrets(result.curl), KEPT.curl),
      ...currentOperation(),
    };
    await this.store.appendCall(entry, record, TIMELINE);
    this.options.print?.(summary(record));
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

  /**
   * The page of the calls matching `filter` that `visible` lets through, and how many match in
   * all: only the timeline's small entries are read whole, then the page's calls.
   */
  async page(filter: CallFilter, visible: (entry: CallEntry) => boolean, { limit, before }: CallPage): Promise<{ calls: ProviderCall[]; total: number }> {
    const matching = (await this.store.callEntries()).filter(
      (entry) =>
        (filter.service === undefined || entry.service === filter.service) &&
        (filter.instance === undefined || entry.instance === filter.instance) &&
        (filter.app === undefined || entry.app === filter.app) &&
        visible(entry),
    );
    const older = before === undefined ? matching : matching.filter((entry) => entry.id < before);
    const page = limit === undefined ? older : older.slice(-limit);
    return { calls: await this.store.calls(page.map((entry) => entry.id)), total: matching.length };
  }

  clear(): Promise<void> {
    return this.store.clearCalls();
  }
}

/** Keys whose values are secrets wherever they appear in an answer (an action's new password, a token). */
const SECRET_KEY = /pass(word|wd|phrase)?|secret|token|credential|private|api[-_]?key|auth/i;

/**
 * The text with the values of secret-looking keys (in JSON) and the passwords in URLs
 * (`scheme://user:password@host`) replaced: the rule bind answers get, for answers that are not.
 */
function maskSecrets(text: string): string {
  // Anchored on "://" and stopped by the next "/": linear, whatever the text.
  const withoutUrlPasswords = (value: string) => value.replace(/(:\/\/[^\s:/@'"]*:)[^\s@/'"]+@/g, `$1${REDACTED}@`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return withoutUrlPasswords(text);
  }
  // Deeper than any real answer nests: the whole subtree is hidden, so that an answer built to
  // nest thousands of levels costs neither the stack nor every listing that records it.
  const mask = (value: unknown, secret: boolean, depth: number): unknown => {
    if (depth > MASK_DEPTH_LIMIT && value !== null && typeof value === "object") return REDACTED;
    if (Array.isArray(value)) return value.map((item) => mask(item, secret, depth + 1));
    if (value !== null && typeof value === "object") {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, mask(item, secret || SECRET_KEY.test(key), depth + 1)]));
    }
    if (secret && value !== null) return REDACTED;
    return typeof value === "string" ? withoutUrlPasswords(value) : value;
  };
  return JSON.stringify(mask(parsed, false, 1));
}

const MASK_DEPTH_LIMIT = 64;

const REDACTED = "<redacted>";

/**
 * The result with the credentials the platform sent replaced wherever the provider's answer (or
 * the failure) repeats them, in any form the shared redaction knows (provider-kit/contract's
 * secrets: as sent, escaped, URL-encoded, base64): a provider that echoes its request must not
 * put them in a message, the proxy's answer, the timeline, the health check or the terminal.
 */
function withoutCredentials(result: CallResult, kubeConfigBase64?: string): CallResult {
  const kubeConfig = kubeConfigBase64 === undefined ? [] : [kubeConfigBase64, Buffer.from(kubeConfigBase64, "base64").toString("utf8")];
  // The client's forms are the service's password's (and its Basic token's).
  const secrets = [...result.secrets, ...kubeConfig.flatMap((text) => tokenForms("the cluster's kube config", text))].sort((a, b) => b.text.length - a.text.length);
  const redact = (text: string) => redactSecrets(text, secrets);
  const { exchange, answer, error } = result;
  return {
    ...result,
    exchange: {
      ...exchange,
      ...(exchange.response ? { response: { ...exchange.response, body: redact(exchange.response.body) } } : {}),
      ...(exchange.error !== undefined ? { error: redact(exchange.error) } : {}),
    },
    ...(answer ? { answer: { ...answer, body: redact(answer.body), bytes: redactSecretBytes(answer.bytes, secrets) } } : {}),
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
