/**
 * Starts the provider. Settings come from the environment (`npm start` loads .env first):
 * PORT (default 8080), PROVIDER_USERNAME and PROVIDER_PASSWORD (required: the credentials in
 * the service manifest, which the platform sends with every call), REGISTRY_STORE (required:
 * where the registry keeps instances and bindings, see below).
 */
import { RedisStore } from "@provider-kit/redis-store";
import { createProvider, MemoryStore, type Store } from "provider-kit";
import { pino } from "pino";
import { createHandlers } from "./handlers.js";
import { InMemoryDatabases } from "./resource.js";

const log = pino();

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    log.fatal(`${name} is not set: set it in the environment or in .env (see .env.example).`);
    process.exit(1);
  }
  return value;
}

const port = Number(process.env.PORT || 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  log.fatal(`PORT must be a port number (0 to 65535), got "${process.env.PORT}".`);
  process.exit(1);
}

/**
 * The registry's store, named by REGISTRY_STORE. In production it must be a Redis URL: the
 * registry then survives restarts and crashes and is shared by every replica (RedisStore, from
 * @provider-kit/redis-store). "memory" keeps it in this process only: after a restart, calls on
 * the instances made before answer 404, which the platform reads as "already gone" (their
 * resources leak), so use it for local trials only.
 */
function registryStore(): Store {
  const setting = required("REGISTRY_STORE");
  if (setting === "memory") return new MemoryStore();
  if (/^rediss?:\/\//.test(setting)) return new RedisStore({ url: setting, log });
  // Not echoed: a Redis URL may hold a password.
  log.fatal('REGISTRY_STORE must be a Redis URL (redis://[[user]:password@]host[:port][/db]) or "memory" (local trials only).');
  process.exit(1);
}

const store = registryStore();
const provider = createProvider(createHandlers(new InMemoryDatabases()), {
  auth: { usernames: [required("PROVIDER_USERNAME")], password: required("PROVIDER_PASSWORD") },
  registry: { store },
  logger: log,
});

const server = provider.listen(port, () => {
  const address = server.address();
  log.info({ port: typeof address === "object" && address ? address.port : port }, "provider listening");
});

// On SIGTERM (a deploy) or Ctrl-C: answer the calls in flight, refuse new ones, then exit.
// The signal may arrive twice (Ctrl-C reaches both tsx and this process): stop once.
let stopping = false;
async function stop(signal: NodeJS.Signals): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "stopping");
  await provider.close();
  await store.close();
  server.close(() => process.exit(0));
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// npm starts this through a shell: a supervisor that signals npm alone ends the shell, not this
// process, which would keep its port. Once re-parented, it stops as on SIGTERM.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void stop("SIGTERM");
}, 1_000).unref();
