/** Pools, as the operator configured them: each team sees the public pools and its own. */
import { findPool, poolsOf, type Pool } from "./config.js";
import type { Actor, Context } from "./context.js";
import { badRequest, forbidden, notFound } from "./errors.js";

export async function listPools(context: Context, actor: Actor): Promise<Array<{ Team: string; Pools: string[] }>> {
  const teams = actor.admin ? (await context.store.all("teams")).map((team) => team.name).sort() : actor.teams;
  return teams.map((team) => ({ Team: team, Pools: poolsOf(context.config, team).map((pool) => pool.name) }));
}

/** Teams a pool rule is checked for: one owner team, or an actor's teams (every pool is open to an admin). */
type PoolUsers = { team: string } | { actor: Actor };

const opensTo = (pool: Pool, users: PoolUsers) =>
  "team" in users ? pool.teams.length === 0 || pool.teams.includes(users.team) : users.actor.admin || users.actor.teams.some((team) => pool.teams.length === 0 || pool.teams.includes(team));

const admits = (pool: Pool, service: string) => pool.services.length === 0 || pool.services.includes(service);

/**
 * The pool a multi-cluster service's instance lives in (or its plans are asked for), checked by
 * both of the pool's rules: its `services` (tsuru's validateMultiCluster, service/service_instance.go)
 * and its `teams`, the rule app creation applies (tsuru's pool.ListPossiblePools; choosePool here).
 * A pool outside either rule never hears of the service's calls, nor sends them its cluster's details.
 */
export function assertPoolFor(context: Context, service: string, name: string, users: PoolUsers): void {
  const choices = poolChoices(context, service, users);
  const pool = findPool(context.config, name);
  if (!pool) throw notFound(`Pool "${name.slice(0, 60)}" not found: ${choices}.`);
  if (!admits(pool, service)) throw badRequest(`Service "${service}" is not available in pool "${pool.name}": ${choices}.`);
  if (!opensTo(pool, users)) {
    const who = "team" in users ? `the team "${users.team}"` : "your teams";
    throw forbidden(`The pool "${pool.name}" is not open to ${who}: ${choices}.`);
  }
}

/** `give one of <the pools open to these users that admit the service>`, for a message. */
export function poolChoices(context: Context, service: string, users: PoolUsers): string {
  const open = context.config.pools.filter((pool) => admits(pool, service) && opensTo(pool, users)).map((pool) => pool.name);
  return `give one of ${open.join(", ") || "(none: ask the operator for a pool open to your team that admits the service)"}`;
}
