/**
 * The two calls the benchmark measures, as the platform sends them, and the one answer every
 * server must give. Servers import the answers from here so all four reply byte for byte alike,
 * and the harness verifies against the same values before it measures.
 */

/** Basic-auth credentials the servers that check auth accept. */
export const CREDENTIALS = { username: "bench-service", password: "s3cret:with-colon" } as const;

/** Instance name used in every path. */
export const INSTANCE = "bench-instance";

/** The environment the bind-app handler returns: a JSON object of strings, as the platform requires. */
export const BIND_ENV: Readonly<Record<string, string>> = {
  BENCH_REDIS_HOST: "10.0.0.15",
  BENCH_REDIS_PORT: "6379",
  BENCH_REDIS_PASSWORD: "not-a-real-password",
};
export const BIND_ENV_JSON = JSON.stringify(BIND_ENV);

export type CallName = "status" | "bind-app" | "unbind-app";
/** The calls of `npm run bench`; `npm run bench:redis` adds unbind-app. */
export const CALL_NAMES: readonly CallName[] = ["status", "bind-app"];

export interface Call {
  name: CallName;
  method: "GET" | "POST" | "DELETE";
  path: string;
  headers: Record<string, string>;
  body?: string;
  expected: {
    status: number;
    /** Exact body text; empty for 204. */
    body: string;
    /** Prefix of the Content-Type header; absent when the answer has no body. */
    contentType?: string;
  };
}

/** Headers every platform call carries (see docs/contract.md, "Transport"). */
const platformHeaders: Record<string, string> = {
  authorization: `Basic ${Buffer.from(`${CREDENTIALS.username}:${CREDENTIALS.password}`).toString("base64")}`,
  accept: "application/json",
  "content-type": "application/x-www-form-urlencoded",
  "user-agent": "Go-http-client/1.1",
  "x-request-id": "bench-request-0001",
};

/** A realistic bind-app form: repeated app-hosts, caller fields and one flattened parameter. */
export function bindAppForm(app: string): string {
  return new URLSearchParams([
    ["app-name", app],
    ["app-host", `${app}.apps.example.com`],
    ["app-hosts", `${app}.apps.example.com`],
    ["app-hosts", `${app}.internal.example.com`],
    ["user", "admin@example.com"],
    ["eventid", "65a1f0c2e4b0a1b2c3d4e5f6"],
    ["parameters.x", "1"],
  ]).toString();
}

/** The unbind-app form the platform sends. */
export function unbindAppForm(app: string): string {
  return new URLSearchParams([
    ["app-name", app],
    ["app-hosts", `${app}.apps.example.com`],
    ["user", "admin@example.com"],
    ["eventid", "65a1f0c2e4b0a1b2c3d4e5f6"],
  ]).toString();
}

export const CALLS: Readonly<Record<CallName, Call>> = {
  status: {
    name: "status",
    method: "GET",
    path: `/resources/${INSTANCE}/status`,
    headers: platformHeaders,
    expected: { status: 204, body: "" },
  },
  "bind-app": {
    name: "bind-app",
    method: "POST",
    path: `/resources/${INSTANCE}/bind-app`,
    headers: {
      ...platformHeaders,
      "x-tsuru-user": "admin@example.com",
      "x-tsuru-eventid": "65a1f0c2e4b0a1b2c3d4e5f6",
    },
    body: bindAppForm("bench-app"),
    expected: { status: 201, body: BIND_ENV_JSON, contentType: "application/json" },
  },
  // Only with a body of its own per request (npm run bench:redis unbinds the apps it bound).
  "unbind-app": {
    name: "unbind-app",
    method: "DELETE",
    path: `/resources/${INSTANCE}/bind-app`,
    headers: { ...platformHeaders, "x-tsuru-user": "admin@example.com", "x-tsuru-eventid": "65a1f0c2e4b0a1b2c3d4e5f6" },
    expected: { status: 200, body: "" },
  },
};
