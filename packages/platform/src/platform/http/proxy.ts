/**
 * The platform's proxy routes: `/services/<s>/proxy/<i>?callback=/resources/<i>/...` (1.0),
 * `/1.20/services/<s>/resources/<i>/<path>`, `/services/proxy/service/<s>?callback=<path>` and
 * `/1.21/services/<s>/authenticated-resources/<path>`. The answer is the provider's status and
 * body, sandboxed: a provider's page must not run as the platform's own (its console keeps a token).
 */
import type { Request, Response } from "express";
import type { ProxiedMethod } from "provider-kit/contract";
import { badRequest } from "../domain/errors.js";
import { cleanSegments, proxyAuthenticatedCall, proxyInstanceCall, proxyServiceCall, type ProxiedAnswer, type ProxiedRequest } from "../domain/proxy.js";
import { nameParam, query, type Route } from "./handler.js";

/** What the caller sent, but its credentials and headers: the platform sends its own. */
function proxied(req: Request, res: Response, segments: string[]): ProxiedRequest {
  const params = new URL(req.originalUrl, "http://platform.invalid").searchParams;
  params.delete("callback");
  const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? { contentType: req.headers["content-type"], body: req.body } : undefined;
  // A caller gone before its answer: the provider call is abandoned, its socket and memory freed.
  const gone = new AbortController();
  res.once("close", () => {
    if (!res.writableFinished) gone.abort();
  });
  return { method: req.method as ProxiedMethod, segments: cleanSegments(segments), query: params.toString(), body, signal: gone.signal };
}

/** A callback is a path on the provider: no address, query or fragment of its own. */
function callbackSegments(req: Request): string[] {
  const callback = query(req, "callback") ?? "";
  if (callback !== "" && (!callback.startsWith("/") || callback.startsWith("//") || /[?#\\]/.test(callback))) {
    throw badRequest(`The callback "${callback.slice(0, 200)}" must be a path on the provider, starting with "/" (put a query on the proxy URL itself).`);
  }
  return callback.split("/");
}

/** `*path` of the route: the decoded segments, none when absent. */
const wildcard = (req: Request) => (req.params.path as string[] | undefined) ?? [];

function answer(res: Response, provider: ProxiedAnswer): void {
  res.writeHead(provider.status, {
    ...(provider.contentType ? { "Content-Type": provider.contentType } : {}),
    ...(provider.contentEncoding ? { "Content-Encoding": provider.contentEncoding } : {}),
    "Content-Length": provider.body.length,
    "Content-Security-Policy": "sandbox",
    "X-Content-Type-Options": "nosniff",
  });
  res.end(provider.body);
}

export const instanceProxy: Route = async ({ req, res, context, actor }) => {
  const instance = nameParam(req, "instance", "instance");
  const segments = cleanSegments(callbackSegments(req));
  // The callback names the instance again; it must be this one (the platform would take any other path as relative).
  if (segments.length > 0 && (segments[0] !== "resources" || segments[1] !== instance)) {
    throw badRequest(`The callback must be a path under the instance: /resources/${instance} or below it.`);
  }
  answer(res, await proxyInstanceCall(context, actor, nameParam(req, "service", "service"), instance, proxied(req, res, segments.slice(2))));
};

export const instanceProxyV2: Route = async ({ req, res, context, actor }) => {
  const request = proxied(req, res, wildcard(req));
  answer(res, await proxyInstanceCall(context, actor, nameParam(req, "service", "service"), nameParam(req, "instance", "instance"), request));
};

export const serviceProxy: Route = async ({ req, res, context, actor }) => {
  answer(res, await proxyServiceCall(context, actor, nameParam(req, "service", "service"), proxied(req, res, callbackSegments(req))));
};

export const authenticatedProxy: Route = async ({ req, res, context, actor }) => {
  answer(res, await proxyAuthenticatedCall(context, actor, nameParam(req, "service", "service"), proxied(req, res, wildcard(req))));
};
