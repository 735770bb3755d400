/**
 * An HTTP client that calls a provider exactly the way the platform does: Basic auth,
 * `Accept: application/json`, `Connection: close`, the form Content-Type on every call,
 * a Go User-Agent, X-Tsuru-* headers, a request id, bodies on DELETE, no redirect following.
 * node:http rather than fetch: fetch would hide `Connection` and refuse bodies on some methods.
 *
 * Every call is recorded as an `Exchange` with secrets redacted at the source, so nothing
 * secret can reach a report: the Authorization header and the values of bind results.
 */
import { randomBytes } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { encodePayload, FORM_CONTENT_TYPE, type Payload } from "./payloads.js";
import { jsonType } from "./shapes.js";
import type { Encoding, Exchange } from "../conformance/types.js";

export type Method = "GET" | "POST" | "PUT" | "DELETE";

export interface Call {
  method: Method;
  /** Path below the provider URL, starting with `/`. */
  path: string;
  payload?: Payload;
  /** Default `valid`. The probes of the auth checks send none, or a wrong password. */
  credentials?: "valid" | "none" | { password: string };
  /** Mutating call of today's platform: `user` and `eventid` in the body and X-Tsuru-* headers. */
  event?: boolean;
  /** Send the multi-cluster headers (bind calls of a service whose apps run on pools/clusters). */
  placement?: boolean;
  /** The answer is a bind result: its values are secrets and never recorded. */
  secretAnswer?: boolean;
}

export interface Answer {
  status: number;
  contentType: string;
  body: string;
}

export interface CallResult {
  exchange: Exchange;
  /** The raw answer, for the checks; absent when no answer came. */
  answer?: Answer;
  /** Why no answer came. */
  error?: string;
}

export interface ClientOptions {
  url: string;
  username: string;
  password: string;
  encoding: Encoding;
  requestIdHeader: string;
  timeoutMs: number;
}

/** The platform is a Go program using net/http's default client. */
const USER_AGENT = "Go-http-client/1.1";
const PLATFORM_USER = "pkc-user@example.com";
const TRIM_AT = 300;
const MAX_BODY = 1 << 20;

export const PLACEMENT = {
  pool: "pkc-pool",
  cluster: "pkc-cluster",
  addresses: ["https://10.0.0.1:6443", "https://10.0.0.2:6443"],
};

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
    const shown = new URL(this.options.url);
    shown.username = "";
    shown.password = "";
    return shown.toString().replace(/\/$/, "");
  }

  /** For the auth probes, which derive wrong passwords from the right one. */
  get password(): string {
    return this.options.password;
  }

  /** Send one call; never throws for HTTP or network failures (they are results to judge). */
  async send(call: Call, signal?: AbortSignal): Promise<CallResult> {
    const eventId = randomBytes(12).toString("hex");
    const headers = this.headers(call, eventId);
    const payload = call.payload && call.event ? withEvent(call.payload, eventId) : call.payload;
    const encoded = payload ? encodePayload(payload, this.options.encoding) : undefined;
    if (encoded) headers["Content-Type"] = encoded.contentType;
    const body = encoded?.body ?? "";
    if (call.method !== "GET") headers["Content-Length"] = String(Buffer.byteLength(body));

    const exchange: Exchange = {
      method: call.method,
      path: call.path,
      requestHeaders: redactHeaders(headers),
      requestBody: trim(body),
    };
    let result: CallResult;
    try {
      const answer = await this.request(call, headers, body, signal);
      exchange.response = {
        status: answer.status,
        contentType: answer.contentType || undefined,
        location: answer.location,
        body: call.secretAnswer && answer.status < 300 ? redactBindResult(answer.body) : trim(answer.body),
      };
      result = { exchange, answer };
    } catch (error) {
      exchange.error = describeNetworkError(error);
      result = { exchange, error: exchange.error };
    }
    this.log.push(result);
    return result;
  }

  private headers(call: Call, eventId: string): Record<string, string | string[]> {
    const headers: Record<string, string | string[]> = {
      "User-Agent": USER_AGENT,
      Accept: "application/json",
      Connection: "close",
      // The platform sets the form type on every call, with or without a body.
      "Content-Type": FORM_CONTENT_TYPE,
      [this.options.requestIdHeader]: `pkc-${this.runId}-${++this.sequence}`,
    };
    const credentials = call.credentials ?? "valid";
    if (credentials !== "none") {
      const password = credentials === "valid" ? this.options.password : credentials.password;
      headers.Authorization = basicAuth(this.options.username, password);
    }
    if (call.event) {
      headers["X-Tsuru-User"] = PLATFORM_USER;
      headers["X-Tsuru-Eventid"] = eventId;
    }
    if (call.placement) {
      headers["X-Tsuru-Pool-Name"] = PLACEMENT.pool;
      headers["X-Tsuru-Pool-Provisioner"] = "kubernetes";
      headers["X-Tsuru-Cluster-Name"] = PLACEMENT.cluster;
      headers["X-Tsuru-Cluster-Provisioner"] = "kubernetes";
      headers["X-Tsuru-Cluster-Addresses"] = PLACEMENT.addresses;
    }
    return headers;
  }

  private request(
    call: Call,
    headers: Record<string, string | string[]>,
    body: string,
    signal: AbortSignal | undefined,
  ): Promise<Answer & { location?: string }> {
    const target = new URL(this.base.pathname.replace(/\/+$/, "") + call.path, this.base);
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
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              contentType: response.headers["content-type"] ?? "",
              location: response.headers.location,
              body: Buffer.concat(chunks).toString("utf8"),
            }),
          );
          response.on("error", reject);
        },
      );
      request.setTimeout(this.options.timeoutMs, () =>
        request.destroy(new Error(`no answer within ${Math.round(this.options.timeoutMs / 1000)} s`)),
      );
      request.on("error", reject);
      request.end(body);
    });
  }
}

function withEvent(payload: Payload, eventId: string): Payload {
  return { ...payload, fields: { ...payload.fields, user: PLATFORM_USER, eventid: eventId } };
}

/** Basic auth as Go's SetBasicAuth writes it: the password is everything after the first colon. */
function basicAuth(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, "utf8").toString("base64")}`;
}

function redactHeaders(headers: Record<string, string | string[]>): Record<string, string | string[]> {
  const copy = { ...headers };
  if (copy.Authorization) copy.Authorization = "Basic <redacted>";
  return copy;
}

export function trim(text: string): string {
  return text.length <= TRIM_AT ? text : `${text.slice(0, TRIM_AT)}… (${text.length - TRIM_AT} more characters)`;
}

/** A bind result with each value replaced by its JSON type: shows the shape, never the credentials. */
export function redactBindResult(body: string): string {
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
