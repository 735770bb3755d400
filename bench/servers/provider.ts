/**
 * The provider under test: `createProvider` with trivial handlers and everything a deployed
 * provider runs switched on: Basic auth, body parsing, validation, and its default logger
 * (one line per request to stdout, which the harness points at a real file). The harness picks
 * a variant through the environment (see catalog.ts):
 *   BENCH_PROVIDER_REGISTRY  off (registry: false, the fair framework-overhead comparison) | memory |
 *                            redis (a RedisStore on the redis-server at BENCH_REDIS_URL, which
 *                            the harness starts: bench/redis-server.ts)
 * It is served as `provider.listen()` serves it: `http.createServer(provider)`.
 */
import { createServer } from "node:http";
import { createProvider, MemoryStore } from "provider-kit";
import { RedisStore } from "@provider-kit/redis-store";
import type { ProviderHandlers } from "provider-kit";
import { BIND_ENV, CREDENTIALS } from "../calls.js";
import { createInstance } from "./instance.js";
import { announceWhenListening } from "./listen.js";
import type { ProviderVariantEnv } from "./catalog.js";

const variant = process.env as ProviderVariantEnv;
const registryOn = variant.BENCH_PROVIDER_REGISTRY === "memory" || variant.BENCH_PROVIDER_REGISTRY === "redis";

function registry() {
  if (variant.BENCH_PROVIDER_REGISTRY === "memory") return { store: new MemoryStore() };
  if (variant.BENCH_PROVIDER_REGISTRY !== "redis") return false;
  const url = process.env.BENCH_REDIS_URL;
  if (url === undefined) throw new Error("BENCH_PROVIDER_REGISTRY=redis needs BENCH_REDIS_URL (the harness sets it).");
  return { store: new RedisStore({ url }) };
}

const handlers: ProviderHandlers = {
  create: () => {},
  destroy: () => {},
  bindApp: () => ({ ...BIND_ENV }),
  unbindApp: () => {},
  status: () => "running",
};

// The provider's own default logger, as a service author leaves it.
const provider = createProvider(handlers, {
  auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password },
  registry: registry(),
});

/** With the registry on, the instance must exist (and be ready) before status and bind-app. */
announceWhenListening(createServer(provider), {
  prepare: registryOn ? (baseUrl) => createInstance(baseUrl) : undefined,
  close: () => provider.close(),
});
