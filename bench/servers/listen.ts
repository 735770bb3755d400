/**
 * Child-process side of a benchmark server: listen on a free loopback port, optionally prepare
 * state over HTTP, tell the harness which port over the IPC channel, and exit cleanly on SIGTERM
 * (a clean exit is what lets `node --cpu-prof` write its profile).
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
  if (!process.send) throw new Error("Run this file through bench/run.ts: it needs the harness's IPC channel.");
  const tell = process.send.bind(process);
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo;
    const prepared = options.prepare?.(`http://127.0.0.1:${port}`) ?? Promise.resolve();
    prepared.then(
      () => tell({ port } satisfies ReadyMessage),
      (error: unknown) => {
        console.error("Preparing the server failed:", error);
        process.exit(1);
      },
    );
  });
  process.on("SIGTERM", () => {
    server.closeAllConnections();
    server.close(() => {
      const closed = options.close?.() ?? Promise.resolve();
      void closed.finally(() => process.exit(0));
    });
  });
  // The harness going away must not leave this server behind.
  process.on("disconnect", () => process.exit(0));
}
