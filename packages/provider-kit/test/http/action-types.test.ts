/**
 * The action API's types: requests are inferred from the path and the zod schemas, a changing
 * action's context can keep data and a reading one's cannot, and `implement` wants exactly the
 * declared handlers. Checked by `npx tsc --noEmit -p tsconfig.json` (each @ts-expect-error must
 * hit an error) and by vitest's expectTypeOf at run time.
 */
import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  declareActions,
  instanceAction,
  serviceAction,
  type CallPlacement,
  type HandlerContext,
  type InstanceRecord,
  type LockedActionContext,
  type PathParams,
  type ProviderActions,
  type ServiceActionContext,
} from "../../src/index.js";

const actions = declareActions({
  rotate: instanceAction({
    name: "apps.rotate-password",
    method: "POST",
    path: "/apps/:app/keys/:key",
    lock: true,
    body: z.object({ length: z.coerce.number().default(32), note: z.string().optional() }),
  }),
  memory: instanceAction({ name: "memory", method: "GET", path: "/memory", lock: false, query: z.object({ unit: z.enum(["b", "mb"]) }) }),
  regions: serviceAction({ name: "regions", method: "GET", path: "/regions/:region" }),
});

describe("action types", () => {
  it("infer each request from the path and the schemas", () => {
    expectTypeOf<PathParams<"/users/:user/keys/:key">>().toEqualTypeOf<{ user: string; key: string }>();
    expectTypeOf<PathParams<"/flush">>().toEqualTypeOf<Record<never, never>>();
    const implemented = actions.implement({
      rotate: (request, ctx) => {
        expectTypeOf(request.instance).toEqualTypeOf<string>();
        expectTypeOf(request.params).toEqualTypeOf<PathParams<"/apps/:app/keys/:key">>();
        expectTypeOf(request.params.app).toEqualTypeOf<string>();
        expectTypeOf(request.body).toEqualTypeOf<{ length: number; note?: string | undefined }>();
        expectTypeOf(ctx).toEqualTypeOf<LockedActionContext>();
        expectTypeOf(ctx.record).toEqualTypeOf<InstanceRecord | undefined>();
        expectTypeOf(ctx.placement).toEqualTypeOf<CallPlacement>();
        ctx.keepData({ rotatedAt: "now" });
        return { rotated: request.params.app };
      },
      memory: async (request, ctx) => {
        expectTypeOf(request.query).toEqualTypeOf<{ unit: "b" | "mb" }>();
        expectTypeOf(request.body).toEqualTypeOf<Record<string, never>>();
        expectTypeOf(ctx).toEqualTypeOf<HandlerContext>();
        return { used: 1 };
      },
      regions: (request, ctx) => {
        expectTypeOf(request.params).toEqualTypeOf<PathParams<"/regions/:region">>();
        expectTypeOf(ctx).toEqualTypeOf<ServiceActionContext>();
      },
    });
    expectTypeOf(implemented).toEqualTypeOf<ProviderActions>();
  });

  it("refuse what the declarations do not allow", () => {
    // Each line below is a type error on purpose: what it returns has no type to check.
    /* eslint-disable @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call */
    const handlers = [
      actions.implement({
        // @ts-expect-error the body has no `size`
        rotate: (request) => request.body.size,
        // @ts-expect-error a reading action cannot keep data: it runs without the lock
        memory: (_request, ctx) => ctx.keepData({}),
        // @ts-expect-error a service action has no instance record
        regions: (_request, ctx) => ctx.record,
      }),
      actions.implement({
        rotate: () => {},
        memory: () => {},
        // @ts-expect-error the path has no `:name`
        regions: (request) => request.params.name,
      }),
    ];
    /* eslint-enable @typescript-eslint/no-unsafe-return, @typescript-eslint/no-unsafe-call */
    expectTypeOf(handlers).toBeArray();
    // @ts-expect-error every declared action needs its handler (implement refuses it at run time too)
    expectTypeOf(() => actions.implement({ rotate: () => {}, memory: () => {} })).toBeFunction();
    // @ts-expect-error `lock` must be said for an instance action
    expectTypeOf(() => instanceAction({ name: "a", method: "POST", path: "/a" })).toBeFunction();
    // @ts-expect-error only the methods a provider serves
    expectTypeOf(() => serviceAction({ name: "a", method: "TRACE", path: "/a" })).toBeFunction();
  });
});
