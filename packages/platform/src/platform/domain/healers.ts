/**
 * Healers: named maintenance tasks an author triggers with `GET /healers/<name>`. Each acts on
 * what the user may see, and says what it did: in its answer, on the platform's terminal and in
 * the log of each app concerned (source `healer`).
 */
import { appLock } from "./apps.js";
import { syncUnitBinds } from "./binding.js";
import { appLog, exclusive, sharesTeam, type Actor, type Context } from "./context.js";
import { notFound } from "./errors.js";
import { instanceLock, instanceStatus } from "./instances.js";

interface Healer {
  /** Lines of what it did, each with the apps it concerns. */
  run(context: Context, actor: Actor): Promise<Array<{ line: string; apps: string[] }>>;
}

const HEALERS: Record<string, Healer> = {
  /** Sends the Variant A unit binds that failed (and the unbinds of units gone) again. */
  "bind-units": {
    async run(context, actor) {
      const apps = (await context.store.all("apps")).filter((app) => sharesTeam(actor, app.teams)).map((app) => app.name).sort();
      const done: Array<{ line: string; apps: string[] }> = [];
      for (const name of apps) {
        const lines = await exclusive(context, [appLock(name)], async () => {
          const app = await context.store.get("apps", name);
          return app ? syncUnitBinds(context, actor, app) : [];
        });
        done.push(...lines.map((line) => ({ line: `${name}: ${line}`, apps: [name] })));
      }
      return done;
    },
  },
  /** Asks each instance's provider for its status and keeps the answer on the instance. */
  "instance-status": {
    async run(context, actor) {
      const instances = (await context.store.all("instances")).filter((instance) => sharesTeam(actor, instance.teams));
      const done: Array<{ line: string; apps: string[] }> = [];
      for (const { name } of instances.sort((a, b) => a.name.localeCompare(b.name))) {
        const status = await instanceStatus(context, actor, name).catch((error: Error) => `Service instance "${name}" status failed: ${error.message}`);
        const apps = await exclusive(context, [instanceLock(name)], async () => {
          const instance = await context.store.get("instances", name);
          if (instance) await context.store.put("instances", name, { ...instance, status });
          return instance?.apps ?? [];
        });
        done.push({ line: status, apps });
      }
      return done;
    },
  },
};

/** `[{"<name>": "/healers/<name>"}]`: the spec's list of `{name: address}` elements. */
export function listHealers(): Array<Record<string, string>> {
  return Object.keys(HEALERS).map((name) => ({ [name]: `/healers/${name}` }));
}

export async function runHealer(context: Context, actor: Actor, name: string): Promise<string[]> {
  const healer = Object.hasOwn(HEALERS, name) ? HEALERS[name] : undefined;
  if (!healer) throw notFound(`Healer "${name.slice(0, 60)}" not found: the healers are ${Object.keys(HEALERS).join(", ")}.`);
  const done = await healer.run(context, actor);
  const lines = done.length > 0 ? done.map((item) => item.line) : ["nothing to do"];
  for (const line of lines) context.say(`healer ${name}: ${line}`);
  for (const { line, apps } of done) for (const app of apps) await appLog(context, app, line, "healer");
  return lines;
}
