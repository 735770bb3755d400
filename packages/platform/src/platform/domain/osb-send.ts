/**
 * One OSB request to a broker: its version header, its auth, JSON, an answer read up to a bound,
 * and the exchange as the call timeline keeps it (credentials never in it).
 */
import { redactSecrets, secretForms, tokenForms, urlWithoutCredentials, type CallResult, type SecretForm } from "provider-kit/contract";
import type { Broker } from "./model.js";

/** The OSB version the platform speaks. */
const OSB_API_VERSION = "2.17";

/** The most of a broker's answer the platform reads, as its proxy forwards at most (1 MiB): a bigger one is a failure. */
const OSB_ANSWER_BYTES = 1 << 20;

export interface OsbRequest {
  method: "GET" | "PUT" | "PATCH" | "DELETE";
  /** Below the broker's URL, from `/v2`. */
  path: string;
  body?: unknown;
  /** Sent in X-Broker-API-Originating-Identity. */
  user?: string;
  /** The answer holds credentials: the timeline keeps their shape only, the platform the answer as it came. */
  secretAnswer?: boolean;
}

/** `http://user:pw@host` holds a secret: the platform refuses such a URL (brokers.ts) and never shows one. */
export function hasUserInfo(url: string): boolean {
  return URL.canParse(url) && (new URL(url).username !== "" || new URL(url).password !== "");
}

/** Sends one OSB request to the broker; never throws for HTTP or network failures. */
export async function sendOsb(broker: Broker, request: OsbRequest, timeoutMs: number): Promise<{ result: CallResult; url: string }> {
  const base = urlWithoutCredentials(broker.url);
  const headers: Record<string, string> = { "X-Broker-API-Version": OSB_API_VERSION };
  const auth = broker.config.authConfig;
  const secrets: SecretForm[] = [];
  if (auth?.basicAuthConfig) {
    const { username, password } = auth.basicAuthConfig;
    headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    secrets.push(...secretForms(username, password));
  } else if (auth?.bearerConfig) {
    headers.Authorization = `Bearer ${auth.bearerConfig.token}`;
    secrets.push(...tokenForms("the bearer token", auth.bearerConfig.token));
  }
  if (request.user) headers["X-Broker-API-Originating-Identity"] = `tsuru ${Buffer.from(JSON.stringify({ user: request.user })).toString("base64")}`;
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const shownHeaders = { ...headers, ...(headers.Authorization ? { Authorization: `${headers.Authorization.split(" ")[0]} <redacted>` } : {}) };
  const curl = [
    `curl -X ${request.method} '${base}${request.path}'`,
    ...Object.entries(shownHeaders).map(([name, value]) => `-H '${name}: ${value}'`),
    ...(body === undefined ? [] : [`-d '${body.replaceAll("'", `'\\''`)}'`]),
  ].join(" ");
  const exchange: CallResult["exchange"] = { method: request.method, path: request.path, requestHeaders: shownHeaders, requestBody: body ?? "" };
  const started = performance.now();
  const failure = (reason: string): { result: CallResult; url: string } => {
    exchange.error = reason;
    return { result: { exchange, durationMs: performance.now() - started, curl, error: reason, secrets }, url: base };
  };
  // fetch refuses a URL with user info, in words that repeat it; brokers.ts refuses to register one.
  if (hasUserInfo(broker.url)) return failure(`the broker's URL holds a user and password: register it again without them, with Config.AuthConfig.BasicAuthConfig`);
  try {
    const response = await fetch(`${broker.url.replace(/\/+$/, "")}${request.path}`, {
      method: request.method,
      headers,
      body,
      redirect: "manual",
      signal: AbortSignal.timeout(Math.min(timeoutMs, 2 ** 31 - 1)),
    });
    const bytes = await boundedBody(response);
    if (!bytes) return failure(`the answer (${response.status}) is larger than the ${OSB_ANSWER_BYTES >> 20} MiB the platform reads from a broker`);
    const raw = bytes.toString("utf8");
    const contentType = response.headers.get("content-type") ?? "";
    // The credentials of a bind go to the app as they came; everything shown is redacted.
    const credentials = request.secretAnswer === true && response.status < 300;
    const shown = redactSecrets(raw, secrets);
    exchange.response = { status: response.status, contentType, body: credentials ? credentialShape(raw, secrets) : shown };
    const text = credentials ? raw : shown;
    return {
      result: { exchange, durationMs: performance.now() - started, curl, answer: { status: response.status, contentType, body: text, bytes: credentials ? bytes : Buffer.from(text) }, secrets },
      url: base,
    };
  } catch (error) {
    const cause = (error as Error & { cause?: { code?: string } }).cause;
    const timedOut = (error as Error).name === "TimeoutError";
    return failure(redactSecrets(timedOut ? `no answer within ${Math.round(timeoutMs / 100) / 10} s` : (cause?.code ?? (error as Error).message), secrets));
  }
}

/** The answer's bytes, or undefined when it is over OSB_ANSWER_BYTES (read no further: a huge answer never fills the memory). */
async function boundedBody(response: Response): Promise<Buffer | undefined> {
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Buffer[] = [];
  let size = 0;
  for (let part = await reader.read(); !part.done; part = await reader.read()) {
    size += part.value.byteLength;
    if (size > OSB_ANSWER_BYTES) {
      await reader.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(Buffer.from(part.value));
  }
  return Buffer.concat(chunks);
}

/**
 * A binding's answer with each credential replaced by its type: the timeline shows the shape (the
 * names are the app's variable names, which the bind answers anyway), never a value.
 */
function credentialShape(text: string, secrets: readonly SecretForm[]): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `<not JSON, ${text.length} characters>`;
  }
  if (parsed === null || typeof parsed !== "object") return `<${typeof parsed}>`;
  const { credentials, ...rest } = parsed as Record<string, unknown>;
  const others = redactSecrets(JSON.stringify(rest), secrets);
  if (credentials === null || typeof credentials !== "object") return others;
  const shape = Object.fromEntries(Object.keys(credentials).map((key) => [key, `<${typeof (credentials as Record<string, unknown>)[key]}>`]));
  return `${others.slice(0, -1)}${others === "{}" ? "" : ","}"credentials":${JSON.stringify(shape)}}`;
}
