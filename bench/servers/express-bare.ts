/** Reference: Express 5 routes giving the two answers; no auth, no body parsing, no checks. */
import { createServer } from "node:http";
import express from "express";
import { BIND_ENV, CALLS } from "../calls.js";
import { announceWhenListening } from "./listen.js";

const app = express();
app.get("/resources/:name/status", (_req, res) => {
  res.status(CALLS.status.expected.status).end();
});
app.post("/resources/:name/bind-app", (_req, res) => {
  res.status(CALLS["bind-app"].expected.status).json(BIND_ENV);
});

announceWhenListening(createServer(app));
