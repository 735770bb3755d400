/** `createProvider` refuses an `osb` option the platform could not use, saying what to fix. */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { ConfigurationError, createProvider, MemoryStore, type OsbOptions } from "../../src/index.js";
import { fakeService, OSB } from "./helpers.js";

const start = (osb: OsbOptions, registry: false | { store: MemoryStore } = { store: new MemoryStore() }) => () =>
  createProvider(fakeService().handlers, { auth: false, registry, logger: pino({ level: "silent" }), osb });

describe("the osb option", () => {
  it("needs the registry", () => {
    expect(start(OSB, false)).toThrow(/osb needs the registry/);
  });

  it.each([
    ["no plan ids", { ...OSB, planIds: {} }, /planIds must give every plan/],
    ["an empty service id", { ...OSB, serviceId: "" }, /osb.serviceId must be a non-empty string/],
    ["a service name with a space", { ...OSB, serviceName: "my redis" }, /only letters, digits/],
    ["an id given twice", { ...OSB, planIds: { a: "x", b: "x" } }, /given twice/],
    ["a plan's id equal to the service's", { ...OSB, planIds: { a: OSB.serviceId } }, /given twice/],
    ["an async plan without an id", { ...OSB, asyncPlans: ["huge"] }, /"huge", which osb.planIds does not list/],
  ])("refuses %s", (_what, osb, message) => {
    expect(start(osb)).toThrow(ConfigurationError);
    expect(start(osb)).toThrow(message);
  });
});
