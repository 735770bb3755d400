/**
 * What each plan of the Redis provider implements. `handlers.ts` picks the plan of an instance
 * and turns the platform's calls into these; a plan knows Redis, not HTTP or the registry.
 */
import type {
  BindingKind,
  CreateRequest,
  InfoItem,
  InstanceData,
  InstanceRecord,
  LifecycleResult,
  Plan,
  StatusResult,
  StepContext,
  UpdateResult,
} from "provider-kit";
import type { Logger } from "pino";

/** Who a binding is for: the user name and the credentials follow from it. */
interface BindingTarget {
  kind: BindingKind;
  /** App name (or app host on Variant B), unit host, or job name. */
  key: string;
}

export interface RedisPlan {
  readonly plan: Plan;
  /** Returns the instance data to keep (always including `plan`), or `pending` to finish in `provision`. */
  create(request: CreateRequest): Promise<LifecycleResult>;
  provision?(record: InstanceRecord, context: StepContext): Promise<UpdateResult>;
  /** Creates or resets the binding's user; returns the app's environment. */
  bind(record: InstanceRecord, target: BindingTarget): Promise<Record<string, string>>;
  unbind(record: InstanceRecord, target: BindingTarget): Promise<void>;
  /**
   * Gives the binding's user one more password and returns the environment with it; the user's
   * other passwords keep working, and so do the app's connections, until `retire` (or a new bind).
   */
  rotate(record: InstanceRecord, target: BindingTarget): Promise<Record<string, string>>;
  /**
   * Removes every password of the binding's user but the newest (the last rotation's) and closes
   * the user's connections, which reconnect with the password they hold. Resolves with how many
   * passwords were removed: 0 when the user has one (no rotation since the last bind).
   */
  retire(record: InstanceRecord, target: BindingTarget): Promise<number>;
  status(record: InstanceRecord, log: Logger): Promise<StatusResult>;
  info(record: InstanceRecord): Promise<InfoItem[]>;
  /** Removes everything the instance owns. Idempotent: a retried destroy succeeds. */
  destroy(record: InstanceRecord): Promise<void>;
  /** Removes the instance's keys and nothing else; resolves with how many were removed. */
  flush(record: InstanceRecord): Promise<number>;
  memory(record: InstanceRecord): Promise<MemoryUse>;
}

/** What the `memory` action answers. */
export interface MemoryUse {
  plan: string;
  /** Keys counted; with `complete` false, counting stopped there. */
  keys: number;
  complete: boolean;
  /** Bytes used; null when there were too many keys to weigh one by one. */
  usedBytes: number | null;
}

/** Reads a string field of the instance data written by `create`, or says the record is broken. */
export function dataString(data: InstanceData, field: string): string {
  const value = data[field];
  if (typeof value !== "string") throw new Error(`Instance data has no "${field}"; the record is damaged.`);
  return value;
}

export function dataNumber(data: InstanceData, field: string): number {
  const value = data[field];
  if (typeof value !== "number") throw new Error(`Instance data has no "${field}"; the record is damaged.`);
  return value;
}
