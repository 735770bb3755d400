/**
 * The platform API's answer shapes: text for errors and messages (the tsuru client prints them
 * verbatim), JSON for records, and bare statuses. The platform's own, not the provider's: the
 * two APIs answer different clients and change for different reasons.
 */
import type { ServerResponse } from "node:http";

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

export function sendText(res: ServerResponse, status: number, message: string): void {
  send(res, status, "text/plain; charset=utf-8", message);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, "application/json; charset=utf-8", JSON.stringify(body));
}

export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}
