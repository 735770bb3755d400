/**
 * Starts the provider. Settings come from the environment (`npm start` loads .env first):
 * PORT (default 8080), PROVIDER_USERNAME and PROVIDER_PASSWORD (required: the credentials in
 * the service manifest, which the platform sends with every call), REGISTRY_STORE (required:
 * where the registry keeps instances and bindings, see below); optional: HOST (the address to
 * listen on; default every address), LOG_FORMAT (`pretty` for lines for people; default JSON
 * lines) and DATA_DIR (a folder where the stand-in resource keeps its databases across restarts).
 * `provider-kit dev` sets HOST, LOG_FORMAT and DATA_DIR, and a registry of its own when
 * REGISTRY_STORE is memory.
 */
import path from "node:path";
import { RedisStore } from "@provider-kit/redis-store";
import { createProvider, MemoryStore, type Store } from "provider-kit";
import { pino, type Logger } from "pino";
import { createHandlers } from "./handlers.js";
import { InMemoryDatabases } from "./resource.js";

/** JSON lines for machines; with LOG_FORMAT=pretty, lines for people through pino-pretty (a dev dependency). */
async function createLogger(): Promise<Logger> {
  if (process.env.LOG_FORMAT !== "pretty") return pino();
  const pretty = await import("pino-pretty").catch(() => undefined);
  if (pretty === undefined) {
    process.stderr.write("LOG_FORMAT=pretty needs pino-pretty (npm install --save-dev pino-pretty): writing JSON lines.\n");
    return pino();
  }
  // One line an entry, timed as `provider-kit dev` times its own lines. The request id stays: a
  // 500 answer names it, and the reader looks for it here.
  return pino(pretty.PinoPretty({ sync: true, singleLine: true, translateTime: "SYS:HH:MM:ss", ignore: "pid,hostname,route,eventId" }));
}

const log = await createLogger();

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
  if (setting === "memory") {
    // Said in the warning logged at start: here production is a setting, not a change to the code.
    return new MemoryStore({ productionAdvice: "For production, set REGISTRY_STORE to a Redis URL (redis://...): see README.md, \"Where instance state lives\"." });
  }
  if (/^rediss?:\/\//.test(setting)) return new RedisStore({ url: setting, log });
  // Not echoed: a Redis URL may hold a password.
  log.fatal('REGISTRY_STORE must be a Redis URL (redis://[[user]:password@]host[:port][/db]) or "memory" (local trials only).');
  process.exit(1);
}

const store = registryStore();
const dataDir = process.env.DATA_DIR;
const databases = new InMemoryDatabases(dataDir ? path.join(dataDir, "databases.json") : undefined);
const provider = createProvider(createHandlers(databases), {
  auth: { usernames: [required("PROVIDER_USERNAME")], password: required("PROVIDER_PASSWORD") },
  registry: { store },
  logger: log,
});

const listening = () => {
  const address = server.address();
  log.info({ port: typeof address === "object" && address ? address.port : port }, "provider listening");
};
// Every address unless HOST names one: in a container the platform reaches the provider from outside.
const host = process.env.HOST;
const server = host ? provider.listen(port, host, listening) : provider.listen(port, listening);

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
