/** A provider written by hand on loopback, so it can answer anything: what the proxy tests call. */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

interface Received {
  method: string;
  url: string;
  body: Buffer;
}

/** A provider written by hand, so it can answer anything; `answer` decides per request. */
export async function rawProvider(answer: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
  const received: Received[] = [];
  const closed: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method!, url: req.url!, body });
      answer(req, res, body);
    });
    res.on("close", () => closed.push(req.url!));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    /** The URLs of the requests whose connection is closed. */
    closed,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export const ok = (res: ServerResponse, body = "{}") => {
  res.writeHead(200, { "Content-Type": "application/json" });
  res.end(body);
};

