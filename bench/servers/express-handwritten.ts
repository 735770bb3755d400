/**
 * Reference: a provider as a service author writes one today with Express, without the
 * framework, with the provider's features (issue 33: "a hand-written Express provider with the
 * same features"): express-basic-auth, body-parser's urlencoded parser (its default, faster
 * `extended: false` mode), the checks done by hand, and what an operator gets from the provider
 * on every call: a request id (read from X-Request-ID or made, echoed), one pino line per
 * answered call to stdout, and a prom-client counter and histogram of the calls. Its registry is
 * a Map (issue 43: "pino and a Map"), as the provider's rows compared with it keep a MemoryStore:
 * status answers from the instance's entry, bind-app records the binding.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import { performance } from "node:perf_hooks";
import bodyParser from "body-parser";
import express, { type NextFunction, type Request, type Response } from "express";
import basicAuth from "express-basic-auth";
import { pino } from "pino";
import { Counter, Histogram, Registry } from "prom-client";
import { BIND_ENV, CREDENTIALS, INSTANCE } from "../calls.js";
import { announceWhenListening } from "./listen.js";

const INSTANCE_NAME = /^[A-Za-z][-a-zA-Z0-9_]+$/;

interface Binding {
  appName: string;
  appHosts: string[];
  createdAt: string;
  updatedAt: string;
}

/** The registry: instances by name (the one the calls use is there from the start, as the provider's is created before the run), bindings by instance and app. */
const instances = new Map<string, { state: "ready"; createdAt: string }>([[INSTANCE, { state: "ready", createdAt: new Date().toISOString() }]]);
const bindings = new Map<string, Binding>();

const log = pino();
const metrics = new Registry();
const requests = new Counter({ name: "http_requests_total", help: "Calls answered.", labelNames: ["route", "method", "status"], registers: [metrics] });
const durations = new Histogram({ name: "http_request_duration_seconds", help: "Time to answer.", labelNames: ["route", "method"], registers: [metrics] });

function requestLog(req: Request, res: Response, next: NextFunction): void {
  const startedAt = performance.now();
  const requestId = req.get("x-request-id") ?? randomUUID();
  res.setHeader("X-Request-ID", requestId);
  res.on("finish", () => {
    const route = (req.route as { path: string } | undefined)?.path ?? "none";
    const durationMs = performance.now() - startedAt;
    requests.inc({ route, method: req.method, status: res.statusCode });
    durations.observe({ route, method: req.method }, durationMs / 1_000);
    log.info({ method: req.method, path: req.path, route, status: res.statusCode, durationMs, requestId }, "request");
  });
  next();
}

const app = express();
app.use(requestLog);
app.use(basicAuth({ users: { [CREDENTIALS.username]: CREDENTIALS.password } }));
app.use(bodyParser.urlencoded());

app.get("/resources/:name/status", (req, res) => {
  if (!INSTANCE_NAME.test(req.params.name)) {
    res.status(400).type("text").send("Invalid instance name.");
    return;
  }
  if (!instances.has(req.params.name)) {
    res.status(404).type("text").send("Instance not found.");
    return;
  }
  res.status(204).end();
});

app.post("/resources/:name/bind-app", (req, res) => {
  const form = (req.body ?? {}) as Record<string, string | string[] | undefined>;
  const appName = form["app-name"];
  if (!INSTANCE_NAME.test(req.params.name)) {
    res.status(400).type("text").send("Invalid instance name.");
    return;
  }
  if (typeof appName !== "string" || appName === "") {
    res.status(400).type("text").send("Missing app-name.");
    return;
  }
  if (!instances.has(req.params.name)) {
    res.status(404).type("text").send("Instance not found.");
    return;
  }
  const key = `${req.params.name}:${appName}`;
  const now = new Date().toISOString();
  const hosts = form["app-hosts"];
  const appHosts = hosts === undefined ? [] : ([] as string[]).concat(hosts);
  bindings.set(key, { appName, appHosts, createdAt: bindings.get(key)?.createdAt ?? now, updatedAt: now });
  res.status(201).json(BIND_ENV);
});

announceWhenListening(createServer(app));
