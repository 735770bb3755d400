/**
 * The few answer shapes of the provider API. Every body the platform reads goes through here,
 * so status codes and content types stay consistent across endpoints.
 * Answers are written with `writeHead` + `end`: Express's `res.send` would redo content-type,
 * charset and freshness work on every call for bodies whose type and length are known here.
 */
import type { ServerResponse } from "node:http";
import type { BoundEnv } from "../lifecycle/lifecycle.js";

const TEXT = "text/plain; charset=utf-8";
const JSON_TYPE = "application/json; charset=utf-8";

function send(res: ServerResponse, status: number, contentType: string, body: string): void {
  res.writeHead(status, { "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

/** Short plain text: errors and status messages, which the platform shows verbatim to its user. */
export function sendText(res: ServerResponse, status: number, message: string): void {
  send(res, status, TEXT, message);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, JSON_TYPE, JSON.stringify(body));
}

/** A success the platform reads by status alone (create, unbind, destroy, update). */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status);
  res.end();
}

/** Bind answers: 201 and the environment the lifecycle converted (`bindEnv`). */
export function sendBindEnv(res: ServerResponse, env: BoundEnv): void {
  sendJson(res, 201, env);
}
