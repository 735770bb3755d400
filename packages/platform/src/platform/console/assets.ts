/**
 * The console: a page at `/` and its scripts and style under `/console/`, plain files read from
 * ./static next to this module's source (also when running from dist/, which tsc does not copy
 * them into). The page holds no data: it logs in through the API and reads everything from it,
 * so serving these files needs no login.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { INSTANCE_NAME_PATTERN } from "provider-kit/contract";
import { notFound } from "../domain/errors.js";
import type { Route } from "../http/handler.js";

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "console.js": "text/javascript; charset=utf-8",
  "dom.js": "text/javascript; charset=utf-8",
  "actions.js": "text/javascript; charset=utf-8",
  "rules.js": "text/javascript; charset=utf-8",
  "calls.js": "text/javascript; charset=utf-8",
  "console.css": "text/css; charset=utf-8",
};

/** Only this page's own files run: no inline script, no other origin (a provider's answer shown on the page stays text). */
const POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

function staticDir(): string {
  // src/platform/console/static, or from dist/platform/console back to the package's source tree.
  const candidates = ["./static/", "../../../src/platform/console/static/"].map((path) => fileURLToPath(new URL(path, import.meta.url)));
  const found = candidates.find((dir) => existsSync(`${dir}index.html`));
  if (!found) throw new Error(`The console's files are missing: looked in ${candidates.join(" and ")}.`);
  return found;
}

const regExp = (pattern: RegExp) => `new RegExp(${JSON.stringify(pattern.source)}, ${JSON.stringify(pattern.flags)})`;

/** The platform's own name rules, written out for the console's forms: they check what the platform would refuse before sending. */
const RULES = `// Written by the platform from its own rules (src/platform/console/assets.ts).
export const INSTANCE_NAME = ${regExp(INSTANCE_NAME_PATTERN)};
`;

let files: Map<string, Buffer> | undefined;

function load(): Map<string, Buffer> {
  if (!files) {
    const dir = staticDir();
    files = new Map(Object.keys(TYPES).map((name) => [name, name === "rules.js" ? Buffer.from(RULES) : readFileSync(`${dir}${name}`)]));
  }
  return files;
}

/** `GET /` (the page) and `GET /console/<file>` (its script and style). */
export const consoleAsset: Route = async ({ req, res }) => {
  const name = typeof req.params.asset === "string" ? req.params.asset : "index.html";
  const content = load().get(name);
  if (!content) throw notFound(`The console has no file "${name.slice(0, 60)}".`);
  res.status(200);
  res.setHeader("Content-Type", TYPES[name]!);
  res.setHeader("Cache-Control", "no-cache");
  res.setHeader("Content-Security-Policy", POLICY);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "no-referrer");
  res.end(content);
};
