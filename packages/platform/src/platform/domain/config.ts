/**
 * What the operator configures at start-up (flags of `provider-kit platform` and the seed file):
 * the pools apps and multi-cluster instances run in, which teams see them and which cluster serves
 * each, the platforms apps may use, the default app quota, and which variant of the spec answers
 * where the two variants' shapes differ.
 */
import { POOL_NAME_PATTERN, type Placement } from "provider-kit/contract";
import type { KubeConfig } from "provider-kit";
import { badRequest } from "./errors.js";
import { TEAM_NAME } from "./model.js";

export interface Pool {
  name: string;
  /** Teams that may use it; empty: every team (a public pool). */
  teams: string[];
  provisioner: string;
  /** Multi-cluster services whose instances may live in it; empty: every service. */
  services: string[];
}

/** Where the pools' apps and instances run; providers learn it from the X-Tsuru-Cluster-* headers. */
export interface Cluster {
  name: string;
  provisioner: string;
  addresses: string[];
  /** The pools it serves; empty: it is the default cluster, serving every pool no other cluster names. */
  pools: string[];
  /** A kube config the cluster propagates to services (X-Tsuru-Cluster-Kube-Config): a secret. */
  propagatedKubeConfig?: KubeConfig;
}

export type ApiVariant = 1 | 2;

export interface PlatformConfig {
  /** The first is the default pool of new apps. */
  pools: Pool[];
  clusters: Cluster[];
  platforms: string[];
  /** Apps a user may own unless their own quota says otherwise; -1: unlimited. */
  defaultQuota: number;
  apiVariant: ApiVariant;
  /** `run`'s bounds: how long a command may take, how much output is kept, how many runs one user has at once. */
  run: RunLimits;
}

export interface RunLimits {
  timeoutMs: number;
  outputBytes: number;
  perUser: number;
}

const LOCAL_PROVISIONER = "local";

export const DEFAULT_CONFIG: PlatformConfig = {
  pools: [{ name: "local", teams: [], provisioner: LOCAL_PROVISIONER, services: [] }],
  clusters: [{ name: "local", provisioner: LOCAL_PROVISIONER, addresses: [], pools: [] }],
  platforms: ["go", "java", "node", "php", "python", "ruby", "static"],
  defaultQuota: -1,
  apiVariant: 1,
  run: { timeoutMs: 60_000, outputBytes: 1 << 20, perUser: 4 },
};

/** `name=a,b` split into the name and its list; the name and each item checked. */
function namedList(text: string, flag: string, itemPattern: RegExp, itemKind: string): { name: string; items: string[] } {
  const [name = "", items] = text.split("=", 2);
  if (!POOL_NAME_PATTERN.test(name)) {
    throw badRequest(`Invalid ${flag} "${text.slice(0, 60)}": give name or name=${itemKind}1,${itemKind}2 (a name of lower-case letters, digits and dashes).`);
  }
  const list = items === undefined ? [] : items.split(",").filter((item) => item !== "");
  const bad = list.find((item) => !itemPattern.test(item));
  if (bad !== undefined) throw badRequest(`Invalid ${itemKind} name "${bad.slice(0, 60)}" in the ${flag} "${name}".`);
  return { name, items: list };
}

/** `name` (public) or `name=team1,team2` (those teams only): the `--pool` flag. */
export function parsePool(text: string): Pool {
  const { name, items } = namedList(text, "pool", TEAM_NAME, "team");
  return { name, teams: items, provisioner: LOCAL_PROVISIONER, services: [] };
}

/** `name=pool1,pool2` (serving those pools) or `name` (the default cluster): the `--cluster` flag. */
export function parseCluster(text: string): Cluster {
  const { name, items } = namedList(text, "cluster", POOL_NAME_PATTERN, "pool");
  return { name, provisioner: LOCAL_PROVISIONER, addresses: [], pools: items };
}

/**
 * The configuration from the flags, plus the seed file's pools and clusters: each list is the
 * flags' and the seed's together, or DEFAULT_CONFIG's when both give none.
 */
export function platformConfig(flags: Partial<PlatformConfig>, seed: Pick<PlatformConfig, "pools" | "clusters">): PlatformConfig {
  const joined = <T>(fromFlags: T[] | undefined, fromSeed: T[], fallback: T[]) => {
    const both = [...(fromFlags ?? []), ...fromSeed];
    return both.length > 0 ? both : fallback;
  };
  return checkedConfig({
    ...DEFAULT_CONFIG,
    ...flags,
    pools: joined(flags.pools, seed.pools, DEFAULT_CONFIG.pools),
    clusters: joined(flags.clusters, seed.clusters, DEFAULT_CONFIG.clusters),
  });
}

/**
 * The pools and clusters checked together: names unique, every pool a cluster names exists, a
 * pool served by one cluster at most, one default cluster at most.
 */
function checkedConfig(config: PlatformConfig): PlatformConfig {
  const duplicate = (names: string[]) => names.find((name, index) => names.indexOf(name) !== index);
  const pools = config.pools.map((pool) => pool.name);
  const twice = duplicate(pools) ?? duplicate(config.clusters.map((cluster) => cluster.name));
  if (twice !== undefined) throw badRequest(`"${twice}" is configured twice: give each pool and each cluster once.`);
  for (const cluster of config.clusters) {
    const unknown = cluster.pools.find((pool) => !pools.includes(pool));
    if (unknown !== undefined) throw badRequest(`The cluster "${cluster.name}" serves the pool "${unknown}", which is not configured: add --pool ${unknown}.`);
  }
  const served = duplicate(config.clusters.flatMap((cluster) => cluster.pools));
  if (served !== undefined) throw badRequest(`The pool "${served}" is served by two clusters: give each pool to one cluster.`);
  if (config.clusters.filter((cluster) => cluster.pools.length === 0).length > 1) {
    throw badRequest("Two clusters serve no named pool, so both would be the default cluster: name the pools of all but one.");
  }
  return config;
}

export function findPool(config: PlatformConfig, name: string): Pool | undefined {
  return config.pools.find((pool) => pool.name === name);
}

/** The cluster serving the pool: the one naming it, else the default cluster, else none. */
export function clusterOf(config: PlatformConfig, pool: string): Cluster | undefined {
  return config.clusters.find((cluster) => cluster.pools.includes(pool)) ?? config.clusters.find((cluster) => cluster.pools.length === 0);
}

/** Where the pool's apps and instances run, as providers are told in fields and X-Tsuru-* headers. */
export function placementOf(config: PlatformConfig, poolName: string): Placement {
  const pool = findPool(config, poolName);
  const cluster = clusterOf(config, poolName);
  return {
    poolName,
    poolProvisioner: pool?.provisioner,
    clusterName: cluster?.name,
    clusterProvisioner: cluster?.provisioner,
    clusterAddresses: cluster?.addresses ?? [],
  };
}

/** The pools a team may use. */
export function poolsOf(config: PlatformConfig, team: string): Pool[] {
  return config.pools.filter((pool) => pool.teams.length === 0 || pool.teams.includes(team));
}
