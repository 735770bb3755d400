/**
 * What a Redis server did, from its own counters (INFO stats and commandstats): the commands an
 * operation (a call, a start-up, a metrics scrape) cost, and by command, how many and how long.
 * A command whose count or time per operation grows with the data is work that walks it.
 */
import type { RedisClient } from "@provider-kit/redis-store/connection";
import { redisCounters, type Counters } from "./redis-server.js";

export interface CommandCost {
  calls: number;
  /** Microseconds Redis spent running them. */
  usec: number;
}

export interface RedisReading extends Counters {
  /** Which reading of its watch this is: the INFO calls of the watch itself are left out of the counts. */
  seq: number;
}

/** Per operation, between two readings. */
export interface RedisWork {
  /** Commands clients sent (a script counts once). */
  commands: number;
  /** New TCP connections accepted. */
  connections: number;
  /** By command, the commands scripts ran included (commandstats names: `acl|save`, `evalsha`). */
  byCommand: Map<string, CommandCost>;
}

/** Reads one server's counters; its own INFO calls are not counted as work. */
export class RedisWatch {
  private readings = 0;

  constructor(private readonly client: RedisClient) {}

  async read(): Promise<RedisReading> {
    return { seq: this.readings++, ...(await redisCounters(this.client)) };
  }

  /**
   * Waits until the server has been idle (at most `idleCommands` commands per `intervalMs`, twice
   * in a row, not counting `ownCommands()`, the caller's own): work a server does in the
   * background, after it answered, is then done. Resolves with the milliseconds waited; gives up after `maxMs`.
   */
  async untilIdle({ intervalMs = 500, idleCommands = 2, maxMs = 60_000, ownCommands = (): number => 0 } = {}): Promise<number> {
    const startedAt = performance.now();
    let previous = await this.read();
    let previousOwn = ownCommands();
    let idleIntervals = 0;
    while (idleIntervals < 2 && performance.now() - startedAt < maxMs) {
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
      const now = await this.read();
      const own = ownCommands();
      idleIntervals = workBetween(previous, now, 1).commands - (own - previousOwn) <= idleCommands ? idleIntervals + 1 : 0;
      previous = now;
      previousOwn = own;
    }
    return performance.now() - startedAt;
  }
}

/** What the server did between two readings of one watch, per operation. */
export function workBetween(before: RedisReading, after: RedisReading, operations: number): RedisWork {
  return workOf(before, after, operations, after.seq - before.seq);
}

/**
 * What a server (or several, their counters summed) did between two readings, per operation:
 * `ownInfoCalls`, the INFO commands of the readings themselves, are left out.
 */
export function workOf(before: Counters, after: Counters, operations: number, ownInfoCalls: number): RedisWork {
  const byCommand = new Map<string, CommandCost>();
  for (const [command, now] of after.byCommand) {
    const then = before.byCommand.get(command) ?? { calls: 0, usec: 0 };
    if (command !== "info" && now.calls > then.calls) {
      byCommand.set(command, { calls: (now.calls - then.calls) / operations, usec: (now.usec - then.usec) / operations });
    }
  }
  return {
    commands: (after.commands - before.commands - ownInfoCalls) / operations,
    connections: (after.connections - before.connections) / operations,
    byCommand,
  };
}

/** `command ×calls µs`, per operation, the costliest first. */
export function describeWork(work: RedisWork, top = 4): string {
  const rows = [...work.byCommand].sort((a, b) => b[1].usec - a[1].usec);
  const shown = rows.slice(0, top).map(([command, cost]) => `${command} ×${formatCount(cost.calls)} ${formatCount(cost.usec)} µs`);
  if (rows.length > top) shown.push(`${rows.length - top} more`);
  return shown.join(", ") || "none";
}

/** Two significant decimals for small figures, whole numbers with thousands spaces for large ones. */
export function formatCount(value: number): string {
  if (value >= 100) return Math.round(value).toLocaleString("en-US").replaceAll(",", " ");
  return Number(value.toPrecision(2)).toString();
}
