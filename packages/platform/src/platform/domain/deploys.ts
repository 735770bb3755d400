/**
 * Deploys. Beyond the spec, `POST /apps/<a>/deploy` (an image or a commit) records one, as the
 * platform's deploy does: the units are replaced by new ones (new names and addresses), every
 * bound Variant A provider is told (unit binds that fail are left for the `bind-units` healer),
 * and the history shows it with its duration as a Go duration in nanoseconds.
 */
import { randomBytes } from "node:crypto";
import { addressOf, appFor, appLock, newUnits } from "./apps.js";
import { syncUnitBinds } from "./binding.js";
import type { ApiVariant } from "./config.js";
import { appLog, exclusive, sharesTeam, type Actor, type Context } from "./context.js";
import { badRequest, forbidden, notFound } from "./errors.js";
import type { Deploy } from "./model.js";

const MAX_REFERENCE = 300;
/** What the platform serializes for a time never set (Go's zero time). */
const NEVER = "0001-01-01T00:00:00Z";

export interface DeployRequest {
  image?: string;
  commit?: string;
  origin?: string;
}

export async function deployApp(context: Context, actor: Actor, name: string, wanted: DeployRequest): Promise<Deploy> {
  const image = wanted.image?.trim() ?? "";
  const commit = wanted.commit?.trim() ?? "";
  if ((image === "") === (commit === "")) throw badRequest('Give what to deploy: {"image": "<image name>"} or {"commit": "<commit id>"}, one of the two.');
  if (image.length > MAX_REFERENCE || commit.length > MAX_REFERENCE) throw badRequest(`The image or commit is longer than ${MAX_REFERENCE} characters.`);
  return exclusive(context, [appLock(name)], async () => {
    const started = process.hrtime.bigint();
    const timestamp = withOffset(new Date());
    const app = await appFor(context, actor, name);
    const lines = [`deploying ${image ? `the image ${image}` : `the commit ${commit}`} to ${addressOf(app)}`];
    const units = await newUnits(context, name, Math.max(app.units.length, 1));
    units.forEach((unit, index) => {
      const old = app.units[index];
      lines.push(old ? `restarting: unit ${unit.name} (${unit.ip}) replaces ${old.name} (${old.ip})` : `starting unit ${unit.name} (${unit.ip})`);
    });
    const deployed = { ...app, units };
    await context.store.put("apps", name, deployed);
    const binds = await syncUnitBinds(context, actor, deployed);
    lines.push(...binds);
    const failedBinds = binds.filter((line) => line.startsWith("failed")).length;
    if (failedBinds > 0) lines.push(`${failedBinds} unit call(s) failed: GET /healers/bind-units sends them again`);
    lines.push("deploy done");
    for (const line of lines) await appLog(context, name, line);
    const deploy: Deploy = {
      // Like the platform's object ids: sortable by creation, then random.
      id: (await context.store.next("deploys")).toString(16).padStart(8, "0") + randomBytes(8).toString("hex"),
      app: name,
      timestamp,
      durationNs: Number(process.hrtime.bigint() - started),
      commit,
      image,
      origin: wanted.origin?.trim() || (image ? "image" : "git"),
      log: lines.join("\n"),
      error: "",
    };
    await context.store.put("deploys", deploy.id, deploy);
    return deploy;
  });
}

/** `2026-11-23T12:55:00.123+00:00`: ISO 8601 with an explicit offset, as the spec shows. */
function withOffset(date: Date): string {
  return date.toISOString().replace("Z", "+00:00");
}

async function visibleApps(context: Context, actor: Actor): Promise<Set<string>> {
  return new Set((await context.store.all("apps")).filter((app) => sharesTeam(actor, app.teams)).map((app) => app.name));
}

/** Newest first; `service`: the deploys of apps bound to one of that service's instances. */
export async function listDeploys(context: Context, actor: Actor, filter: { app?: string; service?: string }): Promise<Deploy[]> {
  const visible = await visibleApps(context, actor);
  let bound: Set<string> | undefined;
  if (filter.service !== undefined) {
    const instances = (await context.store.all("instances")).filter((instance) => instance.service === filter.service);
    bound = new Set(instances.flatMap((instance) => instance.apps));
  }
  return (await context.store.all("deploys"))
    .filter((deploy) => visible.has(deploy.app))
    .filter((deploy) => (filter.app === undefined || deploy.app === filter.app) && (bound === undefined || bound.has(deploy.app)))
    .sort((a, b) => b.id.localeCompare(a.id));
}

export async function findDeploy(context: Context, actor: Actor, id: string): Promise<Deploy> {
  const deploy = await context.store.get("deploys", id);
  if (!deploy) throw notFound(`Deploy "${id.slice(0, 60)}" not found.`);
  if (!(await visibleApps(context, actor)).has(deploy.app)) throw forbidden(`You have no access to the app "${deploy.app}".`);
  return deploy;
}

/** The deploy in the chosen variant's shape (variant 2: `Id` and `Diff`, none of variant 1's extra fields). */
export function deployView(deploy: Deploy, variant: ApiVariant) {
  const common = {
    App: deploy.app,
    Timestamp: deploy.timestamp,
    Duration: deploy.durationNs,
    Commit: deploy.commit,
    Error: deploy.error,
  };
  if (variant === 2) return { Id: deploy.id, ...common, Diff: "" };
  return {
    ID: deploy.id,
    ...common,
    Image: deploy.image,
    Log: deploy.log,
    Origin: deploy.origin,
    CanRollback: deploy.image !== "",
    RemoveDate: NEVER,
  };
}
