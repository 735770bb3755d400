/**
 * What the operator configures at start-up (flags of `provider-kit platform`): the pools apps run
 * in and which teams see them, the platforms apps may use, the default app quota, and which
 * variant of the spec answers where the two variants' shapes differ.
 */
import { badRequest } from "./errors.js";
import { TEAM_NAME } from "./model.js";

export interface Pool {
  name: string;
  /** Teams that may use it; empty: every team (a public pool). */
  teams: string[];
}

export type ApiVariant = 1 | 2;

export interface PlatformConfig {
  /** The first is the default pool of new apps. */
  pools: Pool[];
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

export const DEFAULT_CONFIG: PlatformConfig = {
  pools: [{ name: "local", teams: [] }],
  platforms: ["go", "java", "node", "php", "python", "ruby", "static"],
  defaultQuota: -1,
  apiVariant: 1,
  run: { timeoutMs: 60_000, outputBytes: 1 << 20, perUser: 4 },
};

const POOL_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** `name` (public) or `name=team1,team2` (those teams only): the `--pool` flag. */
export function parsePool(text: string): Pool {
  const [name = "", teams] = text.split("=", 2);
  if (!POOL_NAME.test(name)) throw badRequest(`Invalid pool "${text.slice(0, 60)}": give name or name=team1,team2 (lower-case letters, digits, dashes).`);
  const list = teams === undefined ? [] : teams.split(",").filter((team) => team !== "");
  const bad = list.find((team) => !TEAM_NAME.test(team));
  if (bad !== undefined) throw badRequest(`Invalid team name "${bad.slice(0, 60)}" in the pool "${name}".`);
  return { name, teams: list };
}

/** The pools a team may use. */
export function poolsOf(config: PlatformConfig, team: string): Pool[] {
  return config.pools.filter((pool) => pool.teams.length === 0 || pool.teams.includes(team));
}
