/**
 * The provider's own commands, which the platform's proxy forwards from its users:
 * `tsuru service-instance proxy` style calls under `/resources/<instance>/...`. Declared apart
 * from their work (handlers.ts), so `provider-kit manifest --actions examples/redis/actions.ts`
 * writes the platform's service manifest without starting anything.
 */
import { declareActions, instanceAction, serviceAction } from "provider-kit";

export const actions = declareActions({
  /** One more password for a bound app's user; the app's own keeps working until retired. */
  rotatePassword: instanceAction({
    name: "apps.rotate-password",
    method: "POST",
    path: "/apps/:app/rotate-password",
    lock: true,
  }),
  /** After the grace the caller chose: the user keeps only the newest password. */
  retireOldPasswords: instanceAction({
    name: "apps.retire-old-passwords",
    method: "POST",
    path: "/apps/:app/retire-old-passwords",
    lock: true,
  }),
  /** Removes the instance's keys, and only them. */
  flush: instanceAction({ name: "flush", method: "POST", path: "/flush", lock: true }),
  /** How much memory the instance's keys take. */
  memory: instanceAction({ name: "memory", method: "GET", path: "/memory", lock: false }),
  /** Where this endpoint of the service runs (its cluster) and its plans: for any logged-in user. */
  where: serviceAction({ name: "where", method: "GET", path: "/where" }),
});
