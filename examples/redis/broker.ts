/**
 * The Redis provider as an Open Service Broker too (`/v2`, same port, same credentials): the
 * catalog's ids, which must never change, and the plan whose create always ends in the background.
 */
import type { OsbOptions } from "provider-kit";

export const REDIS_BROKER: OsbOptions = {
  serviceId: "3b1f3f0e-6a0c-4f7e-9c39-5f1d2c7a8e10",
  serviceName: "redis",
  description: "Redis for your apps: a key prefix on a shared server, or a server of its own.",
  planIds: { shared: "3b1f3f0e-6a0c-4f7e-9c39-5f1d2c7a8e11", dedicated: "3b1f3f0e-6a0c-4f7e-9c39-5f1d2c7a8e12" },
  asyncPlans: ["dedicated"],
  tags: ["redis", "key-value"],
};
