/**
 * Graceful shutdown: once `close()` is called new requests answer 503, and `close()` resolves
 * when the requests already in flight have answered. `requestScope` admits and releases requests.
 */
import type { ServerResponse } from "node:http";
import { sendText } from "./answer.js";

export interface Drain {
  /** Count a new request in; false once closing (answer it with `refuse`). */
  admit(): boolean;
  release(): void;
  refuse(res: ServerResponse): void;
  close(): Promise<void>;
}

export function createDrain(): Drain {
  let inFlight = 0;
  let closing = false;
  let idle: (() => void) | undefined;
  /** One promise for every caller: a second `close()` (SIGINT, then SIGTERM) waits for the same calls. */
  let drained: Promise<void> | undefined;

  return {
    admit() {
      if (closing) return false;
      inFlight += 1;
      return true;
    },
    release() {
      inFlight -= 1;
      if (inFlight === 0) idle?.();
    },
    refuse(res) {
      res.setHeader("Connection", "close");
      sendText(res, 503, "The provider is shutting down; try again in a moment.");
    },
    close() {
      closing = true;
      drained ??=
        inFlight === 0
          ? Promise.resolve()
          : new Promise<void>((resolve) => {
              idle = resolve;
            });
      return drained;
    },
  };
}
