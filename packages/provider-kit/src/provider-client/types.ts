/**
 * Types of the platform-side provider client, shared by the conformance kit and the local platform.
 */

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

/** Who asked for a mutating call, and the platform event it belongs to. */
export interface EventContext {
  user: string;
  /** Absent: a fresh random id per call. */
  id?: string;
}
