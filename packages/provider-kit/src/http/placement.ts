/**
 * The pool and cluster of a call, from the headers the platform adds for an instance of a
 * multi-cluster service (and for plans asked for a pool). The kube config is a secret: it is
 * decoded only for the handler that reads it, and never echoed in an answer or a log.
 */
import type { IncomingMessage } from "node:http";
import { HEADERS, type Placement } from "../contract.js";
import { BadRequestError } from "../errors.js";
import type { CallPlacement, JsonValue, KubeConfig } from "../types.js";

const TEXT_HEADERS = (["poolName", "poolProvisioner", "clusterName", "clusterProvisioner"] as const).map(
  (field) => [field, HEADERS[field].toLowerCase()] as const,
);
const CLUSTER_ADDRESSES_HEADER = HEADERS.clusterAddresses.toLowerCase();
const KUBE_CONFIG_HEADER = HEADERS.clusterKubeConfig.toLowerCase();

/** Every value of a repeated header; Node keeps the list in rawHeaders only. */
function headerValues(req: IncomingMessage, name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]?.toLowerCase() === name) values.push(req.rawHeaders[i + 1] ?? "");
  }
  return values;
}

/** The placement headers `req` carries; undefined when it carries none (most calls). */
export function placementHeaders(req: IncomingMessage): Partial<Placement> | undefined {
  let sent: Partial<Placement> | undefined;
  for (const [field, header] of TEXT_HEADERS) {
    const value = req.headers[header];
    if (typeof value === "string") (sent ??= {})[field] = value;
  }
  if (req.headers[CLUSTER_ADDRESSES_HEADER] !== undefined) (sent ??= {}).clusterAddresses = headerValues(req, CLUSTER_ADDRESSES_HEADER);
  return sent;
}

type JsonObject = { [key: string]: JsonValue };

/** For values out of `JSON.parse`, which holds JSON values only. */
function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function kubeConfigOf(encoded: string): KubeConfig {
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(encoded, "base64").toString("utf8"));
  } catch {
    decoded = undefined;
  }
  const { cluster, user } = isJsonObject(decoded) ? decoded : {};
  if (!isJsonObject(cluster) || !isJsonObject(user)) {
    throw new BadRequestError(
      `The ${HEADERS.clusterKubeConfig} header is not a kube config (base64 of JSON with "cluster" and "user"); ` +
        "the platform sends it only for clusters that propagate their kube config.",
    );
  }
  return { cluster, user };
}

/** The call's placement as handlers get it: `clusterAddresses` always a list, the rest when sent. */
export function callPlacement(req: IncomingMessage): CallPlacement {
  const sent = placementHeaders(req);
  const placement: CallPlacement = { ...sent, clusterAddresses: sent?.clusterAddresses ?? [] };
  const kubeConfig = req.headers[KUBE_CONFIG_HEADER];
  if (typeof kubeConfig === "string") placement.kubeConfig = kubeConfigOf(kubeConfig);
  return placement;
}
