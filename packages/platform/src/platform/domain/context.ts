/**
 * What every domain operation works with: the store, the locks that keep one app's or one
 * instance's operations in order, the provider calls, and the current user (the actor).
 */
import { KeyedMutex } from "provider-kit/store";
import type { PlatformStore } from "../store/store.js";
import { DEFAULT_CONFIG, type PlatformConfig } from "./config.js";
import { LoginThrottle } from "./login-throttle.js";
import type { LogEntry } from "./model.js";
import { Providers, type ProviderCallOptions } from "./provider-calls.js";

export interface Context {
  store: PlatformStore;
  locks: KeyedMutex;
  providers: Providers;
  config: PlatformConfig;
  /** The platform's own terminal: reset tokens (there is no mail) and what healers did. */
  say: (line: string) => void;
  /** Failed logins per account, and per address (more: users on one machine share 127.0.0.1). */
  logins: { accounts: LoginThrottle; addresses: LoginThrottle };
}

/** The user a request acts for, with the teams that decide what they may do. */
export interface Actor {
  email: string;
  teams: string[];
  /** Members of the `admin` team may act on everything. */
  admin: boolean;
}

export const ADMIN_TEAM = "admin";
const LOCK_WAIT_MS = 6 * 60_000; // longer than one provider call may last
export const LOG_LINES = 1000;

export interface ContextOptions {
  say?: (line: string) => void;
  providerCalls?: ProviderCallOptions;
}

export function createContext(store: PlatformStore, config: PlatformConfig = DEFAULT_CONFIG, { say = () => {}, providerCalls }: ContextOptions = {}): Context {
  return {
    store,
    locks: new KeyedMutex(),
    providers: new Providers(store, config, providerCalls),
    config,
    say,
    logins: { accounts: new LoginThrottle(5), addresses: new LoginThrottle(20) },
  };
}

/** Runs `work` alone among the operations on these records (keys taken in sorted order: no deadlock). */
export async function exclusive<T>(context: Context, keys: string[], work: () => Promise<T>): Promise<T> {
  const sorted = [...new Set(keys)].sort();
  const run = (index: number): Promise<T> =>
    index === sorted.length ? work() : context.locks.hold(sorted[index]!, LOCK_WAIT_MS, () => run(index + 1));
  return run(0);
}

export async function appLog(context: Context, app: string, message: string, source = "tsuru", unit = "api"): Promise<void> {
  const entry: LogEntry = { Date: new Date().toISOString(), Message: message, Source: source, AppName: app, Unit: unit };
  await context.store.append("log", app, entry, LOG_LINES);
}

export function sharesTeam(actor: Actor, teams: readonly string[]): boolean {
  return actor.admin || teams.some((team) => actor.teams.includes(team));
}
