/**
 * Starts the provider for a test on a free port of 127.0.0.1, with fixed test credentials, an
 * in-memory registry and a silent log, otherwise exactly as src/main.ts builds it.
 */
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { createProvider, MemoryStore } from "provider-kit";
import { createHandlers } from "../src/handlers.js";
import { InMemoryDatabases } from "../src/resource.js";

export const credentials = { username: "test-user", password: "test:password" };

export interface RunningProvider {
  url: string;
  stop(): Promise<void>;
}

export async function serve(): Promise<RunningProvider> {
  const provider = createProvider(createHandlers(new InMemoryDatabases()), {
    auth: { usernames: [credentials.username], password: credentials.password },
    // A fresh registry per test; src/main.ts takes the store REGISTRY_STORE names.
    registry: { store: new MemoryStore() },
    logger: pino({ level: "silent" }),
  });
  const server = provider.listen(0, "127.0.0.1");
  await new Promise<void>((resolve, reject) => server.once("listening", resolve).once("error", reject));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      await provider.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
