/**
 * `provider-kit/contract`: the facts of the provider contract (routes, headers, field names, name
 * patterns) and the client that calls a provider as the platform does. Shared by the kit, the
 * conformance kit and the local platform, so that all three read the contract the same way.
 */
export * from "../contract.js";
export * from "../path-patterns.js";
export * from "../printable.js";
export * from "../provider-client/calls.js";
export * from "../provider-client/client.js";
export * from "../provider-client/payloads.js";
export * from "../provider-client/secrets.js";
export * from "../provider-client/shapes.js";
export * from "../provider-client/types.js";
