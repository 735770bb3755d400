/** Pools, as the operator configured them: each team sees the public pools and its own. */
import { poolsOf } from "./config.js";
import type { Actor, Context } from "./context.js";

export async function listPools(context: Context, actor: Actor): Promise<Array<{ Team: string; Pools: string[] }>> {
  const teams = actor.admin ? (await context.store.all("teams")).map((team) => team.name).sort() : actor.teams;
  return teams.map((team) => ({ Team: team, Pools: poolsOf(context.config, team).map((pool) => pool.name) }));
}
