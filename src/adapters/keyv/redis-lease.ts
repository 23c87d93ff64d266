/**
 * The leader lease on Redis (SPEC §8): `SET NX PX` semantics in small scripts, so taking the
 * lease and drawing its fencing token (`INCR`) are one atomic step, and only the owner that
 * holds the lease can extend or drop it.
 */
import type { LeaderLease } from '../../ports/store.js';
import type { RedisEvalClient } from './redis-append-log.js';

/** KEYS: lease, fence. ARGV: owner, ttl ms. Returns the token (ours, new or kept) or 0. */
const ACQUIRE = `
local cur = redis.call('GET', KEYS[1])
if cur then
  local sep = string.find(cur, '|', 1, true)
  if sep and string.sub(cur, 1, sep - 1) == ARGV[1] then
    redis.call('PEXPIRE', KEYS[1], ARGV[2])
    return tonumber(string.sub(cur, sep + 1))
  end
  return 0
end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. token, 'PX', ARGV[2])
return token
`;

/** KEYS: lease. ARGV: owner|token, ttl ms. */
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS: lease. ARGV: owner|token. */
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export interface RedisLeaseKeys {
  /** Holds `owner|token` while somebody leads; expires after the TTL unless renewed. */
  leaseKey: string;
  /** The counter of acquisitions: the current fencing token. */
  fenceKey: string;
}

export function redisLease(client: () => Promise<RedisEvalClient>, keys: RedisLeaseKeys, owner: string, ttlMs: number): LeaderLease {
  if (owner.includes('|')) throw new Error(`lease owner must not contain "|": ${owner}`);
  const ttl = String(Math.max(1, Math.round(ttlMs)));
  return {
    fenceKey: keys.fenceKey,
    async acquire() {
      const token = await (await client()).eval(ACQUIRE, { keys: [keys.leaseKey, keys.fenceKey], arguments: [owner, ttl] });
      return typeof token === 'number' && token > 0 ? token : undefined;
    },
    async renew(token) {
      return (await (await client()).eval(RENEW, { keys: [keys.leaseKey], arguments: [`${owner}|${token}`, ttl] })) === 1;
    },
    async release(token) {
      await (await client()).eval(RELEASE, { keys: [keys.leaseKey], arguments: [`${owner}|${token}`] });
    },
  };
}
