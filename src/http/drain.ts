/**
 * Graceful shutdown: once `close()` is called new requests answer 503, and `close()` resolves
 * when the requests already in flight have answered.
 */
import type { RequestHandler } from "express";
import { sendText } from "./answer.js";

export interface Drain {
  middleware: RequestHandler;
  close(): Promise<void>;
}

export function createDrain(): Drain {
  let inFlight = 0;
  let closing = false;
  let idle: (() => void) | undefined;

  const finished = () => {
    inFlight -= 1;
    if (inFlight === 0) idle?.();
  };

  return {
    middleware(_req, res, next) {
      if (closing) {
        res.setHeader("Connection", "close");
        sendText(res, 503, "The provider is shutting down; try again in a moment.");
        return;
      }
      inFlight += 1;
      res.once("close", finished);
      next();
    },
    close() {
      closing = true;
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        idle = resolve;
      });
    },
  };
}
