/**
 * Backoff for failed logins, by key (an account from one address, an address): after
 * `freeFailures` failures in a row each further attempt is held until its wait is over, the wait
 * doubling up to a minute, and only then is its password checked; while one attempt of a key is
 * held, another is refused (429) unchecked. So a guesser checks one password per wait, and the
 * right password always gets in, at worst after the wait: nobody can keep an account locked.
 * A success clears the count. In memory: a restart forgets, which costs a guesser a restart.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { tooManyRequests } from "./errors.js";

const FIRST_WAIT_MS = 1_000;
const LONGEST_WAIT_MS = 60_000;
/** A key whose last failure is older than this starts over. */
const FORGET_AFTER_MS = 15 * 60_000;

interface Failures {
  count: number;
  last: number;
  /** No password checked before this time. */
  until: number;
}

export class LoginThrottle {
  private readonly failures = new Map<string, Failures>();
  /** Keys with an attempt held or being checked. */
  private readonly busy = new Set<string>();

  constructor(private readonly freeFailures: number) {}

  /**
   * Waits until `key` may have a password checked, and answers the release to call once it has
   * been; 429 at once while another attempt of `key` is held.
   */
  async take(key: string): Promise<() => void> {
    const until = this.live(key, Date.now())?.until ?? 0;
    const wait = until - Date.now();
    if (wait <= 0) return () => {};
    if (this.busy.has(key)) throw tooManyRequests(`Too many failed logins: try again in ${Math.ceil(wait / 1000)} s.`);
    this.busy.add(key);
    const release = () => this.busy.delete(key);
    await sleep(wait);
    return release;
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
