import type { LogKeys } from '../../ports/store.js';
import { StaleFenceError } from '../../ports/store.js';

/** The subset of a node-redis client the scripts need. */
export interface RedisEvalClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** Keys already prefixed with keyv's namespace. */
export interface RedisAppendExtras {
  /** Where the append id is remembered (`''` for none) and for how long. */
  idKey?: string;
  idTtlMs?: number;
  fence?: { key: string; token: number };
}

/** Refuses the script unless the fence key holds this token (Lua: KEYS[n], ARGV[n]). */
const FENCE_CHECK = (keyIdx: number, argIdx: number): string => `
if KEYS[${keyIdx}] ~= '' then
  local current = redis.call('GET', KEYS[${keyIdx}])
  if current ~= ARGV[${argIdx}] then
    return redis.error_reply('STALEFENCE ' .. tostring(current))
  end
end
`;

/**
 * Reads the head, writes each record under `prefix .. zero-padded number` and moves the head,
 * all inside one script: Redis runs a script atomically, so two replicas appending at once get
 * distinct numbers. The head keeps keyv's wire format (`{"value":N}`) so `get` reads it as-is.
 * KEYS: head, fence key or '', id key or ''. ARGV: prefix, pad, fence token, id ttl, records….
 * An id seen before returns the first number it got then, writing nothing; a stale fence
 * token is refused before anything is written.
 */
const APPEND_SCRIPT = `
${FENCE_CHECK(2, 3)}
if KEYS[3] ~= '' then
  local done = redis.call('GET', KEYS[3])
  if done then return tonumber(done) end
end
local raw = redis.call('GET', KEYS[1])
local head = 0
if raw then
  local ok, decoded = pcall(cjson.decode, raw)
  if not ok or type(decoded) ~= 'table' or type(decoded.value) ~= 'number' then
    return redis.error_reply('log head ' .. KEYS[1] .. ' is corrupt')
  end
  head = decoded.value
end
local prefix = ARGV[1]
local fmt = '%0' .. ARGV[2] .. 'd'
local n = #ARGV - 4
for i = 1, n do
  redis.call('SET', prefix .. string.format(fmt, head + i), ARGV[i + 4])
end
redis.call('SET', KEYS[1], '{"value":' .. string.format('%d', head + n) .. '}')
if KEYS[3] ~= '' then
  redis.call('SET', KEYS[3], string.format('%d', head + 1), 'PX', ARGV[4])
end
return head + 1
`;

/** SET of an already-serialized value while the fence holds. KEYS: key, fence. ARGV: value, token. */
const SET_FENCED_SCRIPT = `
${FENCE_CHECK(2, 2)}
redis.call('SET', KEYS[1], ARGV[1])
return 1
`;

function fenceError(err: unknown, token: number | undefined): unknown {
  const message = err instanceof Error ? err.message : String(err);
  return message.includes('STALEFENCE') ? new StaleFenceError(token) : err;
}

/** Atomic `appendLog` on Redis; resolves with the first number allocated (or allocated before, for a known id). */
export async function redisAppendLog(client: RedisEvalClient, log: LogKeys, records: readonly string[], extras: RedisAppendExtras = {}): Promise<number> {
  let first: unknown;
  try {
    first = await client.eval(APPEND_SCRIPT, {
      keys: [log.headKey, extras.fence?.key ?? '', extras.idKey ?? ''],
      arguments: [log.prefix, String(log.pad), String(extras.fence?.token ?? ''), String(extras.idTtlMs ?? 0), ...records],
    });
  } catch (err) {
    throw fenceError(err, extras.fence?.token);
  }
  if (typeof first !== 'number') throw new Error(`store: Redis append returned ${JSON.stringify(first)}`);
  return first;
}

/** SET `key` to a serialized `record` only while `fence` is current. */
export async function redisSetFenced(client: RedisEvalClient, key: string, record: string, fence: { key: string; token: number }): Promise<void> {
  try {
    await client.eval(SET_FENCED_SCRIPT, { keys: [key, fence.key], arguments: [record, String(fence.token)] });
  } catch (err) {
    throw fenceError(err, fence.token);
  }
}

/** SET NX PX of an already-serialized value. KEYS: key. ARGV: value, ttl ms. */
const SET_IF_ABSENT_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return 0
`;

/** Sets `key` with an expiry only when absent; true when this call set it (one atomic command). */
export async function redisSetIfAbsent(client: RedisEvalClient, key: string, record: string, ttlMs: number): Promise<boolean> {
  const set = await client.eval(SET_IF_ABSENT_SCRIPT, { keys: [key], arguments: [record, String(Math.ceil(ttlMs))] });
  return Number(set) === 1;
}
