/**
 * The kit's calls to a broker, as a platform makes them: Basic auth, `X-Broker-API-Version: 2.17`,
 * JSON bodies. Every call is kept as an `Exchange` with its secrets redacted (the Authorization
 * header, the password wherever an answer repeats it, and the values of credentials).
 */
import { cut, redactSecrets, secretForms, urlWithoutCredentials, type Exchange, type SecretForm } from "provider-kit/contract";

const OSB_VERSION = "2.17";
/** Bodies kept in an exchange: enough to read one, short enough for a report. */
const KEPT_BODY = 2000;

export interface BrokerCall {
  method: "GET" | "PUT" | "PATCH" | "DELETE";
  /** Below the broker URL, starting with `/v2`; a query string may follow. */
  path: string;
  body?: unknown;
  /** Sent as it is, as `application/json`, instead of `body`: a body that is not JSON. */
  rawBody?: string;
  /** Default `valid`. */
  credentials?: "valid" | "none" | { password: string };
  /** The X-Broker-API-Version sent; `null` sends none. Default 2.17. */
  version?: string | null;
  /** The answer holds credentials (a binding): its values are never recorded. */
  secretAnswer?: boolean;
}

interface BrokerAnswer {
  status: number;
  /** The body as JSON, when it is JSON. */
  json?: unknown;
}

export interface BrokerResult {
  exchange: Exchange;
  answer?: BrokerAnswer;
}

export class BrokerClient {
  /** Every call made, in order: the error-body check reads it. */
  readonly log: BrokerResult[] = [];
  private readonly base: URL;
  private readonly secrets: SecretForm[];

  constructor(private readonly options: { url: string; username: string; password: string; timeoutMs: number }) {
    this.base = new URL(options.url);
    this.secrets = secretForms(options.username, options.password);
  }

  /** The broker URL for reports: credentials in it removed. */
  get url(): string {
    return urlWithoutCredentials(this.options.url);
  }

  get password(): string {
    return this.options.password;
  }

  /** Send one call; never throws for HTTP or network failures (they are results to judge). */
  async send(call: BrokerCall): Promise<BrokerResult> {
    const headers: Record<string, string> = {};
    const version = call.version === undefined ? OSB_VERSION : call.version;
    if (version !== null) headers["X-Broker-API-Version"] = version;
    const credentials = call.credentials ?? "valid";
    if (credentials !== "none") {
      const password = credentials === "valid" ? this.options.password : credentials.password;
      headers.Authorization = `Basic ${Buffer.from(`${this.options.username}:${password}`).toString("base64")}`;
    }
    const body = call.rawBody ?? (call.body === undefined ? undefined : JSON.stringify(call.body));
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const exchange: Exchange = {
      method: call.method,
      path: call.path,
      requestHeaders: { ...headers, ...(headers.Authorization ? { Authorization: "Basic <redacted>" } : {}) },
      requestBody: body ?? "",
    };
    const result: BrokerResult = { exchange };
    try {
      const response = await fetch(this.target(call.path), {
        method: call.method,
        headers,
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      const text = await response.text();
      const json = parseJson(text);
      exchange.response = {
        status: response.status,
        contentType: response.headers.get("content-type") ?? undefined,
        location: response.headers.get("location") ?? undefined,
        body: call.secretAnswer && response.status < 300 ? withoutCredentialValues(json, text) : cut(redactSecrets(text, this.secrets), KEPT_BODY),
      };
      result.answer = { status: response.status, json };
    } catch (error) {
      const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause;
      // fetch says only "fetch failed": the cause says why (ECONNREFUSED, a timeout...).
      exchange.error = redactSecrets(cause?.code ?? cause?.message ?? (error as Error).message, this.secrets);
    }
    this.log.push(result);
    return result;
  }

  /** The broker URL (a path prefix kept) joined with `path`. */
  private target(path: string): string {
    const base = this.base.toString().replace(/\/$/, "");
    return `${base}${path}`;
  }
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A binding's answer with each credential replaced by its JSON type: shows the shape, never the secret. */
function withoutCredentialValues(json: unknown, text: string): string {
  if (json === undefined) return `<not JSON, ${text.length} characters>`;
  if (json === null || typeof json !== "object" || Array.isArray(json)) return JSON.stringify(json);
  const { credentials, ...rest } = json as Record<string, unknown>;
  if (credentials === null || typeof credentials !== "object") return cut(JSON.stringify(json), KEPT_BODY);
  const shape = Object.fromEntries(Object.entries(credentials).map(([key, value]) => [key, `<${value === null ? "null" : typeof value}>`]));
  return cut(JSON.stringify({ ...rest, credentials: shape }), KEPT_BODY);
}
