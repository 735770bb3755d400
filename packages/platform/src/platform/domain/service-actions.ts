/**
 * A service's actions (platform 1.31): its manifest, which the service's owners write, and the
 * action permissions `service-action.<service>.<action>` granted to teams. The real platform
 * grants them through roles; here a team holds them directly (see docs/tools/platform.md).
 */
import { ACTION_NAME_PATTERN } from "provider-kit/contract";
import { actionPermission, coveredActions, grantCovers, orphanedGrants, validManifest, type GrantConflict } from "./action-manifest.js";
import { exclusive, type Actor, type Context } from "./context.js";
import { badRequest, conflict, forbidden, notFound, PlatformError } from "./errors.js";
import type { Service, ServiceActionsManifest } from "./model.js";
import { assertOwner, findService, mayUse } from "./services.js";

const serviceLock = (name: string) => `service:${name}`;

/** 409 with the grants a new manifest would orphan; the HTTP layer answers `detail` as JSON, as the platform does. */
export class ManifestConflict extends PlatformError {
  constructor(readonly detail: { service: string; conflicts: GrantConflict[] }) {
    const listed = detail.conflicts.map((item) => `${item.action} (${item.teams.join(", ")})`).join("; ");
    super(`The manifest for service "${detail.service}" would orphan granted actions: ${listed}. Revoke those grants first.`, 409);
  }
}

export async function setActionsManifest(context: Context, actor: Actor, name: string, document: unknown): Promise<void> {
  // Who may write it first: a stranger's manifest costs the platform no validation.
  assertOwner(actor, await findService(context, name));
  const manifest = validManifest(document);
  await exclusive(context, [serviceLock(name)], async () => {
    const service = await findService(context, name);
    assertOwner(actor, service);
    const conflicts = orphanedGrants(service.actionsManifest, manifest, service.actionGrants ?? {});
    if (conflicts.length > 0) throw new ManifestConflict({ service: name, conflicts });
    await context.store.put("services", name, { ...service, actionsManifest: manifest });
  });
}

/** The stored manifest (null: none), for the users who may use the service: the console lists an instance's actions from it. */
export async function actionsManifestOf(context: Context, actor: Actor, name: string): Promise<ServiceActionsManifest | null> {
  const service = await findService(context, name);
  if (!mayUse(actor, service)) throw forbidden(`You have no access to the service "${name}".`);
  return service.actionsManifest ?? null;
}

/** The action permissions of the service and the teams holding each, for its owners. */
export async function actionGrantsOf(context: Context, actor: Actor, name: string): Promise<Record<string, string[]>> {
  const service = await findService(context, name);
  assertOwner(actor, service);
  return Object.fromEntries(Object.entries(service.actionGrants ?? {}).map(([granted, teams]) => [actionPermission(name, granted), teams]));
}

export async function grantAction(context: Context, actor: Actor, name: string, action: string, team: string): Promise<void> {
  await changeGrant(context, actor, name, action, team, (service, holders) => {
    if (coveredActions(service.actionsManifest?.enabled ? service.actionsManifest : undefined, action).length === 0) {
      throw notFound(`The enabled manifest of the service "${name}" has no action "${action}" (nor any below it): PUT the manifest first.`);
    }
    if (holders.includes(team)) throw conflict(`The team "${team}" already holds ${actionPermission(name, action)}.`);
    return [...holders, team];
  });
}

export async function revokeAction(context: Context, actor: Actor, name: string, action: string, team: string): Promise<void> {
  await changeGrant(context, actor, name, action, team, (_service, holders) => {
    if (!holders.includes(team)) throw notFound(`The team "${team}" does not hold ${actionPermission(name, action)}.`);
    return holders.filter((holder) => holder !== team);
  });
}

async function changeGrant(
  context: Context,
  actor: Actor,
  name: string,
  action: string,
  team: string,
  change: (service: Service, holders: string[]) => string[],
): Promise<void> {
  if (!ACTION_NAME_PATTERN.test(action)) throw badRequest(`Invalid action "${action.slice(0, 60)}": lower-case letters, digits and "-", in dot-separated words.`);
  await exclusive(context, [serviceLock(name)], async () => {
    const service = await findService(context, name);
    assertOwner(actor, service);
    if (!(await context.store.get("teams", team))) throw notFound(`Team "${team}" not found.`);
    const grants = { ...service.actionGrants };
    const holders = change(service, grants[action] ?? []);
    if (holders.length > 0) grants[action] = holders;
    else delete grants[action];
    await context.store.put("services", name, { ...service, actionGrants: grants });
  });
}

/**
 * The actor may call `action` on an instance of the service: admins always; others through a
 * team of theirs that holds a grant covering it and has access to the instance (a team grant
 * reaches that team's instances, as a role given with a team context does on the platform).
 */
export function holdsAction(actor: Actor, service: Service, action: string, instanceTeams: readonly string[]): boolean {
  if (actor.admin) return true;
  return Object.entries(service.actionGrants ?? {}).some(
    ([granted, teams]) => grantCovers(granted, action) && teams.some((team) => actor.teams.includes(team) && instanceTeams.includes(team)),
  );
}
