/** Reference: a raw `node:http` server giving the two answers, no routing library, no checks. */
import { createServer } from "node:http";
import { BIND_ENV_JSON, CALLS } from "../calls.js";
import { announceWhenListening } from "./listen.js";

const statusPath = CALLS.status.path;
const bindAppPath = CALLS["bind-app"].path;

const server = createServer((req, res) => {
  if (req.method === "GET" && req.url === statusPath) {
    res.statusCode = 204;
    res.end();
    return;
  }
  if (req.method === "POST" && req.url === bindAppPath) {
    // The form body is left unread, as on the bare Express route: Node discards it.
    res.writeHead(201, { "content-type": "application/json; charset=utf-8" });
    res.end(BIND_ENV_JSON);
    return;
  }
  res.statusCode = 404;
  res.end();
});

announceWhenListening(server);
