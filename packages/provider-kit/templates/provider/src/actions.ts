/**
 * Your own commands, beyond the calls the platform makes by itself: the platform's proxy forwards
 * its users' calls to `/resources/<instance>/<path>` here, with the service's credentials
 * (`POST /1.20/services/<service>/resources/db1/allowed-hosts` reaches the action below).
 * provider-kit serves them like the handlers: Basic auth, the body checked by its schema (400
 * naming the field), 404 for an unknown instance, 412 while it provisions, one log line each.
 *
 * Only declarations here, without their work: `npx provider-kit manifest --actions src/actions.ts`
 * reads them to write the platform's manifest of the actions, which lets its admins grant each one
 * to teams (the permission `service-action.<service>.<name>`). The work is in handlers.ts.
 */
import { declareActions, instanceAction, z } from "provider-kit";

export const actions = declareActions({
  allowHost: instanceAction({
    name: "hosts.allow",
    method: "POST",
    path: "/allowed-hosts",
    // It changes the instance: it runs holding the instance's lock, one at a time with binds,
    // updates and the like. An action that only reads says `lock: false` and runs at once.
    lock: true,
    body: z.object({ host: z.string().min(1).max(255) }),
  }),
});
