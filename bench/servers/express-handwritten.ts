/**
 * Reference: a provider as a service author writes one today with Express, without the
 * framework: express-basic-auth, body-parser's urlencoded parser (its default, faster
 * `extended: false` mode), the checks done by hand, no logging.
 */
import { createServer } from "node:http";
import bodyParser from "body-parser";
import express from "express";
import basicAuth from "express-basic-auth";
import { BIND_ENV, CREDENTIALS } from "../calls.js";
import { announceWhenListening } from "./listen.js";

const INSTANCE_NAME = /^[A-Za-z][-a-zA-Z0-9_]+$/;

const app = express();
app.use(basicAuth({ users: { [CREDENTIALS.username]: CREDENTIALS.password } }));
app.use(bodyParser.urlencoded());

app.get("/resources/:name/status", (req, res) => {
  if (!INSTANCE_NAME.test(req.params.name)) {
    res.status(400).type("text").send("Invalid instance name.");
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
  res.status(201).json(BIND_ENV);
});

announceWhenListening(createServer(app));
