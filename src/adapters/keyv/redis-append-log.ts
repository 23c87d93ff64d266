import type { LogKeys } from '../../ports/store.js';

/** The subset of a node-redis client the append needs. */
export interface RedisEvalClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/**
 * Reads the head, writes each record under `prefix .. zero-padded number` and moves the head,
 * all inside one script: Redis runs a script atomically, so two replicas appending at once get
 * distinct numbers. The head keeps keyv's wire format (`{"value":N}`) so `get` reads it as-is.
 */
const APPEND_SCRIPT = `
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
local n = #ARGV - 2
for i = 1, n do
  redis.call('SET', prefix .. string.format(fmt, head + i), ARGV[i + 2])
end
redis.call('SET', KEYS[1], '{"value":' .. string.format('%d', head + n) .. '}')
return head + 1
`;

/** Atomic `appendLog` on Redis; resolves with the first number allocated. */
export async function redisAppendLog(client: RedisEvalClient, log: LogKeys, records: readonly string[]): Promise<number> {
  const first = await client.eval(APPEND_SCRIPT, { keys: [log.headKey], arguments: [log.prefix, String(log.pad), ...records] });
  if (typeof first !== 'number') throw new Error(`store: Redis append returned ${JSON.stringify(first)}`);
  return first;
}
