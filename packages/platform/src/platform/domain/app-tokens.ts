/**
 * App tokens (`POST /tokens`, variant 2): a credential an app's own processes use for that app's
 * routes. Admins only, as the platform of that era. They do not expire (`Expires: 0`).
 */
import { randomBytes } from "node:crypto";
import { findApp, appLock } from "./apps.js";
import { appLog, exclusive, type Actor, type Context } from "./context.js";
import { forbidden } from "./errors.js";
import { sha256 } from "./users.js";

const APP_TOKEN_VARIABLE = "TSURU_APP_TOKEN";

export interface AppTokenView {
  Token: string;
  Creation: string;
  Expires: number;
  AppName: string;
}

/** With `exportToApp`, the token also becomes the app's private `TSURU_APP_TOKEN`. */
export async function createAppToken(context: Context, actor: Actor, appName: string, exportToApp: boolean): Promise<AppTokenView> {
  if (!actor.admin) throw forbidden("Only admins may create app tokens.");
  return exclusive(context, [appLock(appName)], async () => {
    const app = await findApp(context, appName);
    const token = randomBytes(32).toString("hex");
    const creation = new Date().toISOString();
    await context.store.put("appTokens", sha256(token), { hash: sha256(token), app: app.name, creation });
    if (exportToApp) {
      const env = [...app.env.filter((variable) => variable.name !== APP_TOKEN_VARIABLE), { name: APP_TOKEN_VARIABLE, value: token, public: false }];
      await context.store.put("apps", app.name, { ...app, env });
      await appLog(context, app.name, `setting env vars ${APP_TOKEN_VARIABLE}; restarting app`);
    }
    return { Token: token, Creation: creation, Expires: 0, AppName: app.name };
  });
}

/** What an app token may do: act on its own app, as a member of the app's teams. */
export async function appActor(context: Context, appName: string): Promise<Actor> {
  const app = await findApp(context, appName);
  return { email: `${appName}@app-token`, teams: app.teams, admin: false };
}
