/**
 * A provider serving OSB on a real loopback port, handlers that remember what they were given,
 * and a small OSB client (fetch) that sends the version header unless told otherwise.
 */
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { pino } from "pino";
import { afterEach } from "vitest";
import { createProvider, type HandlerContext, type OsbOptions, type ProviderHandlers, type ProviderOptions, type Store } from "../../src/index.js";
import { gate } from "../../../../test/support/gate.js";

const PASSWORD = "broker-secret";
export const AUTH_HEADER = `Basic ${Buffer.from(`broker:${PASSWORD}`).toString("base64")}`;
export const SERVICE_ID = "6c2b4c8e-0c51-4d39-9d0c-9a8e3f6b7a01";
export const PLAN_IDS = { shared: "2d7c0a51-1b7e-4a3c-8f0e-5a8c9b1d2e01", dedicated: "2d7c0a51-1b7e-4a3c-8f0e-5a8c9b1d2e02" };
export const OSB: OsbOptions = { serviceId: SERVICE_ID, serviceName: "fake-redis", description: "A fake Redis.", planIds: PLAN_IDS };

interface Seen {
  handler: string;
  request: unknown;
  context: Pick<HandlerContext, "user" | "osb">;
}

/**
 * Handlers of a fake service: plan `dedicated` finishes in the background (`provision` waits for
 * `provisioned.open()`), `shared` at once; binds return the instance and the app they saw.
 */
export function fakeService(overrides: Partial<ProviderHandlers> = {}) {
  const seen: Seen[] = [];
  const provisioned = gate();
  const saw = (handler: string, request: unknown, context: HandlerContext) =>
    seen.push({ handler, request, context: { user: context.user, osb: context.osb } });
  const handlers: ProviderHandlers = {
    plans: () => [
      { name: "shared", description: "A key prefix on a shared server." },
      { name: "dedicated", description: "A server of its own." },
    ],
    create(request, context) {
      saw("create", request, context);
      return request.plan === "dedicated" ? { pending: true } : undefined;
    },
    async provision() {
      await provisioned.opened;
    },
    update(request, context) {
      saw("update", request, context);
    },
    destroy(request, context) {
      saw("destroy", request, context);
    },
    bindApp(request, context) {
      saw("bindApp", request, context);
      return { REDIS_HOST: "127.0.0.1", REDIS_PORT: 6379, INSTANCE: request.instance, APP: request.appHost ?? "" };
    },
    unbindApp(request, context) {
      saw("unbindApp", request, context);
    },
    ...overrides,
  };
  return { handlers, seen, provisioned };
}

export interface Broker {
  url: string;
  /** An OSB call with auth and `X-Broker-API-Version: 2.17` (override or drop them in `headers`). */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string | undefined>): Promise<{ status: number; body: Record<string, unknown>; headers: Headers }>;
}

/** Registers the hook that closes every provider a test started. */
export function useBrokers(): (handlers: ProviderHandlers, store: Store, options?: Partial<ProviderOptions>) => Promise<Broker> {
  let started: Array<() => Promise<void>> = [];
  afterEach(async () => {
    await Promise.all(started.map((close) => close()));
    started = [];
  });
  return async (handlers, store, options = {}) => {
    const provider = createProvider(handlers, {
      auth: { usernames: ["broker"], password: PASSWORD },
      registry: { store, pollIntervalMs: 50, stepRetryDelayMs: 10 },
      logger: pino({ level: "silent" }),
      osb: OSB,
      ...options,
    });
    const server = await new Promise<Server>((resolve) => {
      const listening = provider.listen(0, "127.0.0.1", () => resolve(listening));
    });
    started.push(async () => {
      await new Promise((resolve) => server.close(resolve));
      await provider.close();
    });
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return {
      url,
      async call(method, path, body, headers = {}) {
        const sent: Record<string, string> = { Authorization: AUTH_HEADER, "X-Broker-API-Version": "2.17" };
        if (body !== undefined) sent["Content-Type"] = "application/json";
        for (const [name, value] of Object.entries(headers)) {
          if (value === undefined) delete sent[name];
          else sent[name] = value;
        }
        const res = await fetch(url + path, { method, headers: sent, body: body === undefined ? undefined : JSON.stringify(body) });
        const text = await res.text();
        const json = res.headers.get("content-type")?.startsWith("application/json") === true;
        return { status: res.status, body: json ? (JSON.parse(text) as Record<string, unknown>) : { text }, headers: res.headers };
      },
    };
  };
}

/** A provision body for `plan`. */
export function provisionBody(plan: keyof typeof PLAN_IDS, extra: Record<string, unknown> = {}) {
  return { service_id: SERVICE_ID, plan_id: PLAN_IDS[plan], organization_guid: "org-1", space_guid: "space-1", ...extra };
}

export const query = (plan: keyof typeof PLAN_IDS) => `service_id=${SERVICE_ID}&plan_id=${PLAN_IDS[plan]}`;
