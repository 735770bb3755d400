/**
 * Types of the platform-side provider client, shared by the conformance kit and the local platform.
 */

/** `A` and `B` are the spec's variants; `current` is Variant A plus the calls today's platform makes. */
export type Variant = "A" | "B" | "current";

/** How request bodies are sent: form encoded (default) or the platform 1.30+ camelCase JSON. */
export type Encoding = "form" | "json";

/** One request sent to a provider and what came back, with secrets already redacted. */
export interface Exchange {
  method: string;
  path: string;
  requestHeaders: Record<string, string | string[]>;
  requestBody: string;
  /** Absent when no answer came (connection refused, timeout...): see `error`. */
  response?: {
    status: number;
    contentType?: string;
    location?: string;
    /** The body, trimmed; bind results have their values replaced by their types. */
    body: string;
  };
  error?: string;
}

/** Where the app (or job) of a bind call runs: sent as fields and X-Tsuru-* headers. */
export interface Placement {
  pool: string;
  cluster: string;
  provisioner: string;
  /** Addresses of the cluster's API servers. */
  addresses: string[];
}

/** Who asked for a mutating call, and the platform event it belongs to. */
export interface EventContext {
  user: string;
  /** Absent: a fresh random id per call. */
  id?: string;
}
