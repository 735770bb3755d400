/**
 * The Lua scripts of `RedisStore`. Scripts make check-and-write atomic: a lock or lease is only
 * touched by the one who holds it, an instance or binding is only written while the instance
 * lock holds its writer's token (the fence), and the census changes with the state it counts.
 * Each is one round trip, sent by its SHA1 (EVALSHA) and by its text only when Redis does not
 * have it yet.
 */
import { createHash } from "node:crypto";
import { nodeRedis, type RedisStoreClient } from "../redis/connection.js";

export interface Script {
  source: string;
  sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash("sha1").update(source).digest("hex") });

/** What a fenced write script answers when the lock no longer holds the writer's token: it wrote nothing. */
export const LOCK_LOST = -1;

/**
 * A write made only while the instance lock (KEYS[1]) holds the writer's token (ARGV[1]); the
 * write's own keys and arguments follow from KEYS[2] and ARGV[2]. Two forms: the plain one, and
 * `last`, which lets the lock go in the same step (a call's last write: one round trip, not two).
 */
export interface FencedWrite {
  plain: Script;
  last: Script;
}

const fenced = (write: string, answer = "1"): FencedWrite => {
  const check = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return ${LOCK_LOST} end`;
  return {
    plain: script(`${check}\n${write}\nreturn ${answer}`),
    last: script(`${check}\n${write}\nredis.call('DEL', KEYS[1])\nreturn ${answer}`),
  };
};

/** Lua: move an instance's census count from its stored state (if any) to `newState` (nil: deleted). */
const RECOUNT_INSTANCE = `
local function recountInstance(census, old, newState)
  if old then redis.call('HINCRBY', census, 'instance:' .. cjson.decode(old).state, -1) end
  if newState then redis.call('HINCRBY', census, 'instance:' .. newState, 1) end
end`;

// KEYS: lock, instance, pending, census, tombstone. ARGV: token, record JSON, "1" when it owes a step, name, state.
export const SAVE_INSTANCE = fenced(`${RECOUNT_INSTANCE}
recountInstance(KEYS[4], redis.call('GET', KEYS[2]), ARGV[5])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[5])
if ARGV[3] == '1' then redis.call('SADD', KEYS[3], ARGV[4]) else redis.call('SREM', KEYS[3], ARGV[4]) end`);

// KEYS: lock, instance, bindings, pending, census, tombstone. ARGV: token, name, tombstone ttl in ms ("0": none).
export const DELETE_INSTANCE = fenced(`${RECOUNT_INSTANCE}
recountInstance(KEYS[5], redis.call('GET', KEYS[2]), nil)
for _, field in ipairs(redis.call('HKEYS', KEYS[3])) do
  redis.call('HINCRBY', KEYS[5], 'binding:' .. string.match(field, '^[^:]*'), -1)
end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('SREM', KEYS[4], ARGV[2])
if ARGV[3] ~= '0' then redis.call('SET', KEYS[6], '1', 'PX', ARGV[3]) end`);

// KEYS: lock, bindings, census. ARGV: token, field, kind, binding JSON.
export const SAVE_BINDING = fenced(`
if redis.call('HSET', KEYS[2], ARGV[2], ARGV[4]) == 1 then redis.call('HINCRBY', KEYS[3], 'binding:' .. ARGV[3], 1) end`);

// KEYS: lock, bindings, census. ARGV: token, field, kind. Answers 1 when there was such a binding, else 0.
export const DELETE_BINDING = fenced(`
local deleted = redis.call('HDEL', KEYS[2], ARGV[2])
if deleted == 1 then redis.call('HINCRBY', KEYS[3], 'binding:' .. ARGV[3], -1) end`, "deleted");

/**
 * Take the lock (KEYS[1], token ARGV[1], ttl ARGV[2] ms) in turn, then read the instance
 * (KEYS[4]) and, when ARGV[4] names one, that binding field of KEYS[5]: answers the record and
 * the binding ("" for none).
 *
 * The turn is a queue of tickets, one per waiting caller: KEYS[2] holds each ticket's arrival
 * (Redis time, in microseconds), KEYS[3] the time it lapses, ARGV[3] ms after the waiter's
 * latest try. The lock goes to the oldest live ticket when it is free, or to anyone while no
 * one queues (the try then costs what a plain SET NX does). A waiter that stops trying (it
 * gave up, or its process died) stops holding the queue back once its ticket lapses. A try
 * that does not get the lock joins the queue, or renews its ticket, and answers how many live
 * tickets are ahead of it.
 */
export const TAKE_LOCK_IN_TURN = script(`
local function takeAndRead()
  if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return nil end
  local read = {redis.call('GET', KEYS[4]) or ''}
  if ARGV[4] then table.insert(read, redis.call('HGET', KEYS[5], ARGV[4]) or '') end
  return read
end
local queued = redis.call('EXISTS', KEYS[2]) == 1
if not queued then
  local read = takeAndRead()
  if read then return read end
end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
if queued then
  for _, lapsed in ipairs(redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)) do
    redis.call('ZREM', KEYS[2], lapsed)
    redis.call('ZREM', KEYS[3], lapsed)
  end
  local first = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if first == nil or first == ARGV[1] then
    local read = takeAndRead()
    if read then
      redis.call('ZREM', KEYS[2], ARGV[1])
      redis.call('ZREM', KEYS[3], ARGV[1])
      return read
    end
  end
end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[1])
redis.call('ZADD', KEYS[3], now + tonumber(ARGV[3]) * 1000, ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
return redis.call('ZRANK', KEYS[2], ARGV[1])`);

/** Withdraws the ticket ARGV[1] from the lock's queue (KEYS[1] arrivals, KEYS[2] lapse times), for a waiter that gives up. */
export const LEAVE_LOCK_QUEUE = script(`
redis.call('ZREM', KEYS[1], ARGV[1])
return redis.call('ZREM', KEYS[2], ARGV[1])`);

/** Renews a lock or lease (KEYS[1]) for ARGV[2] ms if the token ARGV[1] holds it: 1, else 0. */
export const RENEW_IF_HOLDER = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`);

export const RELEASE_IF_HOLDER = script(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`);

export const TAKE_OR_RENEW = script(`
local holder = redis.call('GET', KEYS[1])
if holder == false or holder == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0`);

/**
 * Count every instance and binding under the prefix (ARGV[1], a glob-escaped pattern prefix)
 * into the census (KEYS[1]), replacing what it held. Atomic, so writes made meanwhile are
 * either counted here or counted by their own script afterwards. Run once per store written by
 * a version without the census: it walks everything, like the census of those versions did at
 * every scrape.
 */
export const COUNT_CENSUS = script(`
local counts = {}
local function add(field, n) counts[field] = (counts[field] or 0) + n end
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. 'instance:*')) do
  local json = redis.call('GET', key)
  if json then add('instance:' .. cjson.decode(json).state, 1) end
end
for _, key in ipairs(redis.call('KEYS', ARGV[1] .. 'bindings:*')) do
  for _, field in ipairs(redis.call('HKEYS', key)) do add('binding:' .. string.match(field, '^[^:]*'), 1) end
end
redis.call('DEL', KEYS[1])
local fields = {'counted', '1'}
for field, n in pairs(counts) do table.insert(fields, field); table.insert(fields, n) end
redis.call('HSET', KEYS[1], unpack(fields))
return 1`);

/** Runs a script by its SHA1, sending its text only when this Redis does not have it (after a restart or failover). */
export async function evalScript(redis: RedisStoreClient, script: Script, keys: string[], args: string[]): Promise<unknown> {
  try {
    return await redis.evalSha(script.sha, { keys, arguments: args });
  } catch (error) {
    if (!isNoScript(error)) throw error;
    return redis.eval(script.source, { keys, arguments: args });
  }
}

export function isNoScript(error: unknown): boolean {
  return error instanceof nodeRedis().ErrorReply && error.message.startsWith("NOSCRIPT");
}
