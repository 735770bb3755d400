/** What the RedisStore tests share: the store harness and the waits of test/support. */
export * from "../../../test/support/stores.js";
export { eventually } from "../../../test/support/eventually.js";
export { gate } from "../../../test/support/gate.js";
