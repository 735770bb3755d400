/**
 * The logger a provider uses unless it is given one: pino to stdout in pino's asynchronous
 * mode. Lines are written in batches of up to 4 KiB instead of one write per line (a busy
 * provider pays far fewer writes), and at least every 100 ms, so a quiet provider's log stays
 * current. pino writes out what is left when the process exits, even through `process.exit()`;
 * a crash of the machine itself can lose the last 100 ms.
 */
import { pino, type Logger, type LoggerOptions } from "pino";

export const LOG_BATCH_BYTES = 4096;
export const LOG_FLUSH_INTERVAL_MS = 100;

/** A pino logger writing to stdout the way `createProvider`'s default logger does. */
export function createLogger(options: LoggerOptions = {}): Logger {
  return pino(
    options,
    pino.destination({ dest: 1, sync: false, minLength: LOG_BATCH_BYTES, periodicFlush: LOG_FLUSH_INTERVAL_MS }),
  );
}
