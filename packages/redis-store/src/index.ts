/** @provider-kit/redis-store: provider-kit's instance registry in Redis (standalone or Sentinel). */
export { RedisStore, type RedisStoreOptions } from "./lifecycle/redis-store.js";
export { StoreUnavailableError } from "./lifecycle/redis-store-client.js";
export { ReplicaWaitError } from "./redis/replicas.js";
export type { RedisStoreClient, SentinelAddress } from "./redis/connection.js";
