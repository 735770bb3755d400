/**
 * The provider's handlers: each call goes to the plan the instance was created with.
 * The registry has already answered 404/409/412/202 where it applies, and serialised calls
 * on one instance, so a plan sees only calls it can act on.
 */
import {
  appBindingKey,
  BadRequestError,
  NotFoundError,
  PoolRequiredError,
  ProviderError,
  type BindingKind,
  type HandlerContext,
  type InstanceRecord,
  type ProviderHandlers,
  type Store,
} from "provider-kit";
import { isRedisOutage } from "@provider-kit/redis-store/connection";
import { actions } from "./actions.js";
import type { RedisPlan } from "./plan.js";

/**
 * The instance's Redis away (restarting, unreachable, loading): a 503 the platform's user can
 * retry, not a 500 that reads like a bug. Status keeps its own answer: "down", with the reason.
 */
async function whileRedisServes<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!isRedisOutage(error)) throw error;
    throw new ProviderError("The instance's Redis server does not answer right now; try again in a moment.", 503, { cause: error });
  }
}

/**
 * `bindings`: the registry's, which says whether an app is bound (rotate-password). `cluster`: the
 * one cluster this provider serves, when it is one endpoint of a multi-cluster service.
 */
export function redisHandlers(plans: readonly [RedisPlan, ...RedisPlan[]], bindings: Pick<Store, "getBinding">, cluster?: string): ProviderHandlers {
  const [defaultPlan] = plans;
  const names = plans.map((plan) => plan.plan.name).join(", ");

  /** No plan (the oldest platform sends none) means the first one. */
  function planNamed(name: string | undefined): RedisPlan {
    if (!name) return defaultPlan;
    const plan = plans.find((candidate) => candidate.plan.name === name);
    if (!plan) throw new BadRequestError(`Unknown plan "${name}". Choose one of: ${names}.`);
    return plan;
  }

  function recordOf(context: HandlerContext): InstanceRecord {
    if (!context.record) {
      throw new ProviderError("The Redis provider needs the registry: it keeps each instance's plan and secrets there.");
    }
    return context.record;
  }

  /** `create` stores the plan name in the data, so an instance created without a plan still has one. */
  const planOf = (record: InstanceRecord) => planNamed(typeof record.data.plan === "string" ? record.data.plan : (record.plan ?? ""));

  /** An instance is created where it will run: on this provider's cluster, never on another's. */
  function assertServedHere({ placement }: HandlerContext): void {
    if (cluster === undefined || placement.clusterName === cluster) return;
    const asked = placement.poolName === undefined ? "no pool" : `the pool "${placement.poolName}" on the cluster "${placement.clusterName ?? "(none)"}"`;
    throw new BadRequestError(
      `This provider serves the cluster "${cluster}" and the call is for ${asked}: ` +
        `create the instance in a pool of "${cluster}", or register the provider of that cluster as the service's endpoint.<cluster>.`,
    );
  }

  async function assertBound(instance: string, app: string): Promise<void> {
    if ((await bindings.getBinding(instance, "app", app)) === undefined) {
      throw new NotFoundError(`App "${app}" is not bound to instance "${instance}"; bind it first.`);
    }
  }

  const bind = (kind: BindingKind, key: string | undefined, context: HandlerContext) => {
    if (!key) throw new BadRequestError(`The ${kind} to bind is missing from the request.`);
    const record = recordOf(context);
    return whileRedisServes(() => planOf(record).bind(record, { kind, key }));
  };
  const unbind = async (kind: BindingKind, key: string | undefined, context: HandlerContext) => {
    if (!key) throw new BadRequestError(`The ${kind} to unbind is missing from the request.`);
    const record = recordOf(context);
    await whileRedisServes(() => planOf(record).unbind(record, { kind, key }));
  };

  return {
    plans(context) {
      // One endpoint of a multi-cluster service: its plans are those of the pool asked for.
      if (cluster !== undefined && context.placement.poolName === undefined) {
        throw new PoolRequiredError(`This provider serves the cluster "${cluster}": ask for the plans of one of its pools.`);
      }
      return plans.map((plan) => plan.plan);
    },
    create: (request, context) => {
      assertServedHere(context);
      return whileRedisServes(() => planNamed(request.plan).create(request));
    },
    async provision(record, context) {
      const plan = planOf(record);
      if (!plan.provision) throw new ProviderError(`Plan "${plan.plan.name}" has nothing to provision in the background.`);
      return plan.provision(record, context);
    },
    // Removal is tried at once; when it fails part-way (a process stopped, its folder not
    // removable), the instance is left `deleting` and the registry retries it in the background,
    // so status says what is happening instead of "ready" for an instance that no longer runs.
    async destroy(_request, context) {
      const record = recordOf(context);
      try {
        await planOf(record).destroy(record);
        return undefined;
      } catch (error) {
        context.log.warn({ err: error }, "removing the instance failed; retrying in the background");
        return { pending: true };
      }
    },
    async deprovision(record) {
      await planOf(record).destroy(record);
    },
    bindApp: (request, context) => bind("app", appBindingKey(request), context),
    unbindApp: (request, context) => unbind("app", appBindingKey(request), context),
    bindUnit: (request, context) => bind("unit", request.unitHost, context),
    unbindUnit: (request, context) => unbind("unit", request.unitHost, context),
    bindJob: (request, context) => bind("job", request.jobName, context),
    unbindJob: (request, context) => unbind("job", request.jobName, context),
    status(_request, context) {
      const record = recordOf(context);
      return planOf(record).status(record, context.log);
    },
    async info(_request, context) {
      const record = recordOf(context);
      const items = await whileRedisServes(() => planOf(record).info(record));
      return cluster === undefined ? items : [...items, { label: "Cluster", value: cluster }];
    },
    actions: actions.implement({
      // On a binding that exists: the same user, with a second password (docs/guide/actions.md, "Rotating a credential").
      async rotatePassword({ instance, params }, context) {
        await assertBound(instance, params.app);
        const record = recordOf(context);
        return whileRedisServes(() => planOf(record).rotate(record, { kind: "app", key: params.app }));
      },
      async retireOldPasswords({ instance, params }, context) {
        await assertBound(instance, params.app);
        const record = recordOf(context);
        const retired = await whileRedisServes(() => planOf(record).retire(record, { kind: "app", key: params.app }));
        if (retired === 0) {
          throw new ProviderError(
            `App "${params.app}" has one password on instance "${instance}": nothing to retire (no rotation since it was last bound).`,
            409,
          );
        }
        return { retiredPasswords: retired };
      },
      async flush(_request, context) {
        const record = recordOf(context);
        return { removedKeys: await whileRedisServes(() => planOf(record).flush(record)) };
      },
      memory(_request, context) {
        const record = recordOf(context);
        return whileRedisServes(() => planOf(record).memory(record));
      },
      where: () => ({ cluster: cluster ?? null, plans: plans.map((plan) => plan.plan.name) }),
    }),
  };
}
