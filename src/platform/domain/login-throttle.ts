/**
 * Backoff for failed logins, by key (an account, an address): after `freeFailures` failures in a
 * row each further attempt waits, the wait doubling up to a minute. A success clears the count.
 * In memory: a restart forgets, which costs a guesser a restart of the platform.
 */
import { tooManyRequests } from "./errors.js";

const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 60_000;
/** A key whose last failure is older than this starts over. */
const FORGET_AFTER_MS = 15 * 60_000;

interface Failures {
  count: number;
  last: number;
  /** No attempt before this time. */
  until: number;
}

export class LoginThrottle {
  private readonly failures = new Map<string, Failures>();

  constructor(private readonly freeFailures: number) {}

  /** Throws 429 while `key` must still wait. */
  check(key: string, now = Date.now()): void {
    const until = this.live(key, now)?.until ?? 0;
    if (until > now) {
      const seconds = Math.ceil((until - now) / 1000);
      throw tooManyRequests(`Too many failed logins: try again in ${seconds} s.`);
    }
  }

  failed(key: string, now = Date.now()): void {
    const count = (this.live(key, now)?.count ?? 0) + 1;
    const beyond = count - this.freeFailures;
    const wait = beyond <= 0 ? 0 : Math.min(FIRST_WAIT_MS * 2 ** (beyond - 1), LONGEST_WAIT_MS);
    this.failures.set(key, { count, last: now, until: now + wait });
  }

  succeeded(key: string): void {
    this.failures.delete(key);
  }

  private live(key: string, now: number): Failures | undefined {
    const failures = this.failures.get(key);
    if (failures && now - failures.last > FORGET_AFTER_MS) {
      this.failures.delete(key);
      return undefined;
    }
    return failures;
  }
}
