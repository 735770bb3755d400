/**
 * Where the platform keeps its state. Records are plain JSON documents by kind and key; logs
 * are capped lists; counters number units and calls. Two implementations: memory (throw-away
 * runs and tests) and Redis (the default, so a restart loses nothing).
 */
import type { ApiKey, App, AppToken, Broker, BrokerInstance, Deploy, Instance, LogEntry, ProviderCall, ResetToken, Service, Team, Token, User } from "../domain/model.js";

export interface Records {
  users: User;
  tokens: Token;
  teams: Team;
  services: Service;
  instances: Instance;
  apps: App;
  resets: ResetToken;
  apiKeys: ApiKey;
  appTokens: AppToken;
  deploys: Deploy;
  brokers: Broker;
  brokerInstances: BrokerInstance;
}

export type Kind = keyof Records;

export interface Lists {
  log: LogEntry;
}

/**
 * What the timeline's reader needs to know of a call to decide whether to show it, without
 * reading the call itself: what it was about, and who sent it when it is about no instance or app.
 */
export interface CallEntry {
  id: number;
  service: string;
  instance?: string;
  app?: string;
  /** A proxied call's sender's teams (a call the platform made for itself has none). */
  senderTeams?: string[];
}

/** The most the timeline keeps: calls, and the bytes of their JSON. */
export interface TimelineBounds {
  calls: number;
  bytes: number;
}

export interface PlatformStore {
  /** What keeps the state, as the full health check names it. */
  readonly name: string;
  get<K extends Kind>(kind: K, key: string): Promise<Records[K] | undefined>;
  put<K extends Kind>(kind: K, key: string, value: Records[K]): Promise<void>;
  /** true when there was something to delete. */
  delete(kind: Kind, key: string): Promise<boolean>;
  all<K extends Kind>(kind: K): Promise<Array<Records[K]>>;
  /** Appends to the list named `name` (one per app for logs), keeping the newest `max` items. */
  append<L extends keyof Lists>(list: L, name: string, item: Lists[L], max: number): Promise<void>;
  /** Oldest first. */
  items<L extends keyof Lists>(list: L, name: string): Promise<Array<Lists[L]>>;
  /** Empties the list named `name`. */
  clear(list: keyof Lists, name: string): Promise<void>;
  /** Adds a call to the timeline, then drops its oldest calls until it is within `bounds`. */
  appendCall(entry: CallEntry, call: ProviderCall, bounds: TimelineBounds): Promise<void>;
  /** The timeline's entries, oldest first: small, read whole to filter and page. */
  callEntries(): Promise<CallEntry[]>;
  /** The kept calls with these ids, in the order given (the calls dropped since are left out). */
  calls(ids: readonly number[]): Promise<ProviderCall[]>;
  /** Empties the timeline. */
  clearCalls(): Promise<void>;
  /** 1, 2, 3... per counter, surviving restarts. */
  next(counter: string): Promise<number>;
  /** Throws when the state cannot be reached (the full health check). */
  ping(): Promise<void>;
  close(): Promise<void>;
}
