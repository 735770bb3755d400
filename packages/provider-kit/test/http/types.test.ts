/**
 * The handler API's types: a correct handler set compiles, wrong ones do not.
 * Checked by `npx tsc --noEmit -p tsconfig.json` (each @ts-expect-error must hit an error)
 * and by vitest's expectTypeOf at run time.
 */
import { describe, expectTypeOf, it } from "vitest";
import {
  createProvider,
  type BindAppRequest,
  type BindResult,
  type CreateRequest,
  type HandlerContext,
  type Provider,
  type ProviderHandlers,
  type StatusResult,
} from "../../src/index.js";

const typed = {
  create: async (request: CreateRequest, context: HandlerContext) => {
    expectTypeOf(request.instance).toEqualTypeOf<string>();
    expectTypeOf(request.tags).toEqualTypeOf<string[]>();
    expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
    return { pending: true, data: { port: 6379 } };
  },
  destroy: async () => {},
  bindApp: async (request: BindAppRequest) => ({ HOST: `${request.instance}.local`, PORT: 6379, TLS: true }),
  unbindApp: async () => {},
  status: async (): Promise<StatusResult> => ({ down: "stopped" }),
  info: async () => [{ label: "Plan", value: "small" }],
} satisfies ProviderHandlers;

describe("handler types", () => {
  it("a typed handler set compiles and createProvider returns a Provider", () => {
    expectTypeOf(createProvider(typed, { auth: false, registry: false })).toEqualTypeOf<Provider>();
    expectTypeOf<ReturnType<ProviderHandlers["bindApp"]>>().toEqualTypeOf<BindResult | Promise<BindResult>>();
  });

  it("wrong handler sets do not compile", () => {
    const wrong: ProviderHandlers[] = [
      // @ts-expect-error create is required
      { destroy: typed.destroy, bindApp: typed.bindApp, unbindApp: typed.unbindApp },
      // @ts-expect-error bind env values must be strings, numbers or booleans
      { ...typed, bindApp: async () => ({ HOST: { nested: true } }) },
      // @ts-expect-error status must be "pending", "running", { down } or { message }
      { ...typed, status: async () => "ok" },
      // @ts-expect-error info items are { label, value }
      { ...typed, info: async () => [{ name: "x" }] },
      // @ts-expect-error the request is typed: BindAppRequest has no `plan`
      { ...typed, bindApp: async (request: BindAppRequest) => ({ PLAN: request.plan }) },
    ];
    expectTypeOf(wrong).toBeArray();
  });

  it("options are checked too", () => {
    // @ts-expect-error auth is required: credentials or an explicit false
    expectTypeOf(() => createProvider(typed, { registry: false })).toBeFunction();
    // @ts-expect-error registry is required: a store or an explicit false
    expectTypeOf(() => createProvider(typed, { auth: false })).toBeFunction();
    // @ts-expect-error a registry needs its store
    expectTypeOf(() => createProvider(typed, { auth: false, registry: { lockTimeoutMs: 1_000 } })).toBeFunction();
    // @ts-expect-error usernames is a list
    expectTypeOf(() => createProvider(typed, { auth: { usernames: "redis", password: "p" }, registry: false })).toBeFunction();
    // @ts-expect-error unknown variant
    expectTypeOf(() => createProvider(typed, { auth: false, registry: false, variants: ["C"] })).toBeFunction();
  });
});
