/**
 * Starts the provider. Settings come from the environment (`npm start` loads .env first):
 * PORT (default 8080), PROVIDER_USERNAME and PROVIDER_PASSWORD (required: the credentials in
 * the service manifest, which the platform sends with every call).
 */
import { createProvider } from "provider-kit";
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
const provider = createProvider(createHandlers(new InMemoryDatabases()), {
  auth: { usernames: [required("PROVIDER_USERNAME")], password: required("PROVIDER_PASSWORD") },
  logger: log,
  // Instance state (the registry) lives in this process by default, so it is lost on restart
  // and not shared between replicas. To keep and share it, put it in Redis:
  //   registry: { store: new RedisStore({ url: "redis://redis.internal:6379" }) },
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
