/**
 * An HTTP client that calls a provider exactly the way the platform does: Basic auth,
 * `Accept: application/json`, `Connection: close`, the form Content-Type on every call,
 * a Go User-Agent, X-Tsuru-* headers, a request id, bodies on DELETE, no redirect following,
 * no retries, 15 s to connect and a limit on the whole call. Used by the conformance kit and
 * by the local platform. node:http rather than fetch: fetch would hide `Connection` and refuse
 * bodies on some methods.
 *
 * Every call is recorded as an `Exchange` with secrets redacted at the source, so nothing
 * secret can reach a report or a log: the Authorization header, the values of bind results, and
 * the credentials wherever an answer echoes them (a debug page's frame locals).
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import type { Socket } from "node:net";
import https from "node:https";
import { encodePayload, FORM_CONTENT_TYPE, type Payload } from "./payloads.js";
import { basicToken, secretForms, redactSecrets, urlWithoutCredentials, type SecretForm } from "./secrets.js";
import { jsonType } from "./shapes.js";
import { HEADERS, type Encoding, type PlacementHeaders } from "../contract.js";
import type { EventContext, Exchange } from "./types.js";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** The methods the platform's proxy forwards (its router's, and HEAD with GET). */
export type ProxiedMethod = Method | "HEAD";

export interface Call {
  method: Method | ProxiedMethod;
  /** Path below the provider URL, starting with `/` (a query string may follow). */
  path: string;
  payload?: Payload;
  /**
   * A body sent as it is, in place of `payload`: what the platform's proxy forwards from its
   * user, and the kit's probes of input a provider must refuse.
   */
  raw?: { contentType?: string; body: string | Buffer };
  /** Default `valid`. The probes of the auth checks send none, or a wrong password. */
  credentials?: "valid" | "none" | { password: string };
  /** Mutating call: `user` and `eventid` in the body and X-Tsuru-* headers. */
  event?: EventContext;
  /** Send the multi-cluster headers: where the call's instance lives (or the pool plans are asked for). */
  placement?: PlacementHeaders;
  /** The answer is a bind result: its values are secrets and never recorded. */
  secretAnswer?: boolean;
}

export interface Answer {
  status: number;
  contentType: string;
  body: string;
  /** The body's bytes as they came (what `body` decodes as UTF-8): what the platform's proxy forwards. */
  bytes: Buffer;
  /** How the provider encoded the body (`Content-Encoding`), when it said. */
  contentEncoding?: string;
  /** The provider sent more than the client keeps (1 MiB): `body` is its beginning only. */
  truncated?: true;
}

export interface CallResult {
  exchange: Exchange;
  /** From the first byte sent to the last byte received (or the failure). */
  durationMs: number;
  /** A shell command that sends the same request, the password left as `$PROVIDER_PASSWORD`. */
  curl: string;
  /** The raw answer, for the checks; absent when no answer came. */
  answer?: Answer;
  /** Why no answer came. */
  error?: string;
  /** The forms of the credentials this call sent (and of the service's own): an answer holding one discloses it. */
  secrets: SecretForm[];
}

export interface ClientOptions {
  url: string;
  username: string;
  password: string;
  encoding: Encoding;
  requestIdHeader: string;
  /** Prefix of the request ids (`<prefix>-<run>-<n>`). Default `pkc`. */
  requestIdPrefix?: string;
  /** Limit on the whole call, answer included. */
  timeoutMs: number;
  /** Limit on opening the connection. Default 15 000 ms, as the platform. */
  connectTimeoutMs?: number;
  /** How much of the body the curl line keeps (characters), the rest replaced by a marker. Default: all. */
  curlBodyChars?: number;
}

/** The platform is a Go program using net/http's default client. */
const USER_AGENT = "Go-http-client/1.1";
const TRIM_AT = 300;
const MAX_BODY = 1 << 20;
const CONNECT_TIMEOUT_MS = 15_000;

export class PlatformClient {
  /** Every call made, in order: the cross-cutting checks (no 405, no redirect...) read it. */
  readonly log: CallResult[] = [];
  private readonly base: URL;
  private readonly runId = randomBytes(4).toString("hex");
  private sequence = 0;

  constructor(private readonly options: ClientOptions) {
    this.base = new URL(options.url);
  }

  /** The provider URL for reports and messages: credentials in it (`http://user:pass@host`) removed. */
  get url(): string {
    return urlWithoutCredentials(this.options.url);
  }

  /** For the auth probes, which derive wrong passwords from the right one. */
  get password(): string {
    return this.options.password;
  }

  /** Send one call; never throws for HTTP or network failures (they are results to judge). */
  async send(call: Call, signal?: AbortSignal): Promise<CallResult> {
    const event = call.event && { user: call.event.user, id: call.event.id ?? randomBytes(12).toString("hex") };
    const headers = this.headers(call, event);
    const payload = call.payload && event ? withEvent(call.payload, event) : call.payload;
    const encoded = payload ? encodePayload(payload, this.options.encoding) : undefined;
    if (encoded) headers["Content-Type"] = encoded.contentType;
    if (call.raw) {
      // A forwarded body keeps its caller's type; none given, none sent.
      if (call.raw.contentType) headers["Content-Type"] = call.raw.contentType;
      else delete headers["Content-Type"];
    }
    const body = call.raw?.body ?? encoded?.body ?? "";
    if (call.method !== "GET" && call.method !== "HEAD") headers["Content-Length"] = String(Buffer.byteLength(body));
    const shownBody = typeof body === "string" ? body : body.toString("utf8");

    const exchange: Exchange = {
      method: call.method,
      path: call.path,
      requestHeaders: redactHeaders(headers),
      requestBody: trim(shownBody),
    };
    const started = performance.now();
    const curl = this.curl(call, headers, shownBody);
    const secrets = this.secretsOf(call);
    let result: CallResult;
    try {
      const answer = await this.request(call, headers, body, signal);
      exchange.response = {
        status: answer.status,
        contentType: answer.contentType || undefined,
        location: answer.location,
        body: call.secretAnswer && answer.status < 300 ? redactBindResult(answer.body) : trim(redactSecrets(answer.body, secrets)),
      };
      result = { exchange, answer, durationMs: performance.now() - started, curl, secrets };
    } catch (error) {
      exchange.error = redactSecrets(describeNetworkError(error), secrets);
      result = { exchange, error: exchange.error, durationMs: performance.now() - started, curl, secrets };
    }
    this.log.push(result);
    return result;
  }

  /** The service's password and, for a probe, the one the call sent instead (it may differ). */
  private secretsOf(call: Call): SecretForm[] {
    const own = secretForms(this.options.username, this.options.password);
    const sent = typeof call.credentials === "object" ? secretForms(this.options.username, call.credentials.password) : [];
    return [...sent, ...own].filter((form, index, all) => all.findIndex((other) => other.text === form.text) === index);
  }

  private headers(call: Call, event: Required<EventContext> | undefined): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {
      "User-Agent": USER_AGENT,
      Accept: "application/json",
      Connection: "close",
      // The platform sets the form type on every call, with or without a body.
      "Content-Type": FORM_CONTENT_TYPE,
      [this.options.requestIdHeader]: `${this.options.requestIdPrefix ?? "pkc"}-${this.runId}-${++this.sequence}`,
    };
    const credentials = call.credentials ?? "valid";
    if (credentials !== "none") {
      const password = credentials === "valid" ? this.options.password : credentials.password;
      headers.Authorization = basicAuth(this.options.username, password);
    }
    if (event) {
      headers[HEADERS.user] = event.user;
      headers[HEADERS.eventId] = event.id;
    }
    if (call.placement) {
      const { clusterAddresses, ...named } = call.placement;
      for (const [field, value] of Object.entries(named)) if (value !== undefined) headers[HEADERS[field as keyof typeof named]] = value;
      if (clusterAddresses.length > 0) headers[HEADERS.clusterAddresses] = clusterAddresses;
    }
    return headers;
  }

  private target(call: Call): URL {
    return new URL(this.base.pathname.replace(/\/+$/, "") + call.path, this.base);
  }

  /** The same request as a shell command; the password and kube config stay variables, so the line can be shown. */
  private curl(call: Call, headers: Record<string, string | string[]>, body: string): string {
    const target = this.target(call);
    target.username = "";
    target.password = "";
    const parts = ["curl", "-sS", "-X", call.method];
    if (headers.Authorization) parts.push("-u", `${shellQuote(`${this.options.username}:`)}"$PROVIDER_PASSWORD"`);
    for (const [name, value] of Object.entries(headers)) {
      if (name === "Authorization" || name === "Content-Length" || name === "Connection") continue;
      // A secret, like the password: the line shows where it goes, not what it is.
      if (name === HEADERS.clusterKubeConfig) {
        parts.push("-H", `${shellQuote(`${name}: `)}"$CLUSTER_KUBE_CONFIG"`);
        continue;
      }
      for (const item of typeof value === "string" ? [value] : value) parts.push("-H", shellQuote(`${name}: ${item}`));
    }
    if (body !== "") parts.push("--data-raw", shellQuote(cut(body, this.options.curlBodyChars ?? Infinity)));
    parts.push(shellQuote(target.toString()));
    return parts.join(" ");
  }

  private request(
    call: Call,
    headers: Record<string, string | string[]>,
    body: string | Buffer,
    signal: AbortSignal | undefined,
  ): Promise<Answer & { location?: string }> {
    const target = this.target(call);
    const transport = target.protocol === "https:" ? https : http;
    return new Promise((resolve, reject) => {
      const request = transport.request(
        target,
        { method: call.method, headers, agent: false, signal },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on("data", (chunk: Buffer) => {
            size += chunk.length;
            if (size <= MAX_BODY) chunks.push(chunk);
          });
          response.on("end", () => {
            const bytes = Buffer.concat(chunks);
            const contentEncoding = response.headers["content-encoding"];
            resolve({
              status: response.statusCode ?? 0,
              contentType: response.headers["content-type"] ?? "",
              location: response.headers.location,
              body: bytes.toString("utf8"),
              bytes,
              ...(contentEncoding ? { contentEncoding } : {}),
              ...(size > MAX_BODY ? { truncated: true as const } : {}),
            });
          });
          response.on("error", reject);
        },
      );
      const connectMs = this.options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS;
      const total = setTimeout(
        () => request.destroy(new Error(`no answer within ${seconds(this.options.timeoutMs)}`)),
        this.options.timeoutMs,
      );
      const connect = setTimeout(
        () => request.destroy(new Error(`could not connect within ${seconds(connectMs)}`)),
        connectMs,
      );
      request.on("socket", (socket) => socket.once("connect", () => clearTimeout(connect)));
      request.on("close", () => {
        clearTimeout(total);
        clearTimeout(connect);
      });
      // A 101 with `Upgrade` is no answer a caller of the platform can take: its status, the connection dropped.
      request.on("upgrade", (response: http.IncomingMessage, socket: Socket) => {
        socket.destroy();
        resolve({ status: response.statusCode ?? 0, contentType: response.headers["content-type"] ?? "", body: "", bytes: Buffer.alloc(0) });
      });
      request.on("error", reject);
      request.end(body);
    });
  }
}

function withEvent(payload: Payload, event: Required<EventContext>): Payload {
  return { ...payload, fields: { ...payload.fields, user: event.user, eventid: event.id } };
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}

/** One shell word: single quotes, with each `'` written as `'\''`. */
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

/** Basic auth as Go's SetBasicAuth writes it: the password is everything after the first colon. */
function basicAuth(username: string, password: string): string {
  return `Basic ${basicToken(username, password)}`;
}

function redactHeaders(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const copy = { ...headers };
  if (copy.Authorization) copy.Authorization = "Basic <redacted>";
  if (copy[HEADERS.clusterKubeConfig]) copy[HEADERS.clusterKubeConfig] = "<redacted>";
  return copy;
}

function trim(text: string): string {
  return cut(text, TRIM_AT);
}

/** The text's first `max` characters, and a marker saying how many more there were. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** A bind result with each value replaced by its JSON type: shows the shape, never the credentials. */
function redactBindResult(body: string): string {
  if (body.trim() === "") return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return `<not JSON, ${body.length} characters>`;
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return `<${jsonType(parsed)}>`;
  const shape = Object.keys(parsed).map((key) => `${JSON.stringify(key)}:<${jsonType((parsed as Record<string, unknown>)[key])}>`);
  return trim(`{${shape.join(",")}}`);
}

function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as NodeJS.ErrnoException).code;
  if (error.name === "AbortError") return "call aborted";
  return code && !error.message.includes(code) ? `${error.message} (${code})` : error.message;
}
