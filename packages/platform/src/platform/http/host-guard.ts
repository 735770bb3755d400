/**
 * What keeps web pages out of a platform on a developer's machine. A page whose host name is
 * re-pointed to 127.0.0.1 (DNS rebinding) sends its own name in `Host`: only the platform's own
 * names are answered. A page of another origin can still send simple requests to the real
 * address: a state change carrying an `Origin` that is not the platform's is refused.
 */
import type { RequestHandler } from "express";
import { sendText } from "./handler.js";

export interface HostGuardOptions {
  /** The address the platform listens on (its name is always accepted). */
  listenHost: string;
  port: number;
  /** More host names to answer for (--allowed-host). */
  allowedHosts: readonly string[];
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"];
/** Listening on every interface names no host: only the loopback names and --allowed-host then. */
const EVERY_INTERFACE = new Set(["0.0.0.0", "::", "[::]"]);
const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** `name` as it appears in a Host header: lower case, IPv6 addresses in brackets. */
function hostName(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes(":") && !lower.startsWith("[") ? `[${lower}]` : lower;
}

export function hostGuard({ listenHost, port, allowedHosts }: HostGuardOptions): RequestHandler {
  const names = [...LOOPBACK_NAMES, ...(EVERY_INTERFACE.has(listenHost) ? [] : [listenHost]), ...allowedHosts].map(hostName);
  // A browser leaves out the default port.
  const hosts = new Set(names.flatMap((name) => [`${name}:${port}`, ...(port === 80 ? [name] : [])]));
  const origins = new Set([...hosts].map((host) => `http://${host}`));
  return (req, res, next) => {
    const host = (req.headers.host ?? "").toLowerCase();
    if (!hosts.has(host)) {
      const name = host.replace(/:\d+$/, "");
      sendText(
        res,
        403,
        `This platform does not answer for the host name "${name}" (it guards against DNS rebinding). ` +
          `Call it as localhost:${port} or 127.0.0.1:${port}, or start it with --allowed-host ${name || "<name>"} to answer for that name.`,
      );
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !SAFE_METHODS.has(req.method) && !origins.has(origin.toLowerCase())) {
      sendText(
        res,
        403,
        `Refused a ${req.method} from the web page at ${origin}: only the platform's own pages may change its state. ` +
          "Call the API from a client that sends no Origin (curl, the tsuru client) or from the console.",
      );
      return;
    }
    next();
  };
}
