/**
 * Child-process side of a benchmark server: listen on a free loopback port, optionally prepare
 * state over HTTP, tell the harness which port over the IPC channel, and on SIGTERM close what it
 * opened (the provider, its Redis connections) and exit.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Message a server child sends once it accepts connections. */
export interface ReadyMessage {
  port: number;
}

export interface ListenOptions {
  /** Runs once listening, before the harness is told: e.g. create the instance a registry needs. */
  prepare?: (baseUrl: string) => Promise<void>;
  /** Runs on SIGTERM after the server stopped accepting connections. */
  close?: () => Promise<void>;
}

export function announceWhenListening(server: Server, options: ListenOptions = {}): void {
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    announce(port, {
      ...options,
      close: async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
        await options.close?.();
      },
    });
  });
}

/**
 * For a server that listens on its own (the Redis example): prepare, tell the harness its port,
 * and on SIGTERM run `close` (which stops the server) and exit.
 */
export function announce(port: number, options: ListenOptions = {}): void {
  if (!process.send) throw new Error("Run this file through a bench harness (bench/run.ts, bench/redis.ts): it needs their IPC channel.");
  const tell = process.send.bind(process);
  const prepared = options.prepare?.(`http://127.0.0.1:${port}`) ?? Promise.resolve();
  prepared.then(
    () => tell({ port } satisfies ReadyMessage),
    (error: unknown) => {
      console.error("Preparing the server failed:", error);
      process.exit(1);
    },
  );
  process.once("SIGTERM", () => {
    const closed = options.close?.() ?? Promise.resolve();
    void closed.finally(() => process.exit(0));
  });
  // The harness going away must not leave this server behind.
  process.on("disconnect", () => process.exit(0));
}
