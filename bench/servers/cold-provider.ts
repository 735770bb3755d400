/**
 * A provider as a service author ships one, compiled: `createProvider` with an
 * in-memory registry and its default logger, `provider.listen(PORT)`. bench/start.ts times it
 * from process start to its first answer.
 */
import { createProvider, MemoryStore } from "provider-kit";
import { CREDENTIALS } from "../calls.js";

const provider = createProvider(
  { create: () => {}, destroy: () => {}, bindApp: () => ({}), unbindApp: () => {} },
  { auth: { usernames: [CREDENTIALS.username], password: CREDENTIALS.password }, registry: { store: new MemoryStore() } },
);
const server = provider.listen(Number(process.env.PORT), "127.0.0.1");
process.once("SIGTERM", () => {
  server.close();
  void provider.close().then(() => process.exit(0));
});
