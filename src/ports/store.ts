/**
 * Durable key/value storage behind the ledger (SPEC §8). Implemented over keyv in adapters/keyv.
 * `set` resolves only once the value is durable: callers acknowledge webhooks after it.
 */
export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  /**
   * Values in `keys` order; `undefined` for a missing key. A record that cannot be decoded
   * rejects the whole call with {@link CorruptRecordError} naming its key, so a reader can
   * skip exactly that record.
   */
  getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  /**
   * Appends `values` to the log `log` atomically: numbers them consecutively after the head
   * *as stored* (never as a process remembers it), writes every record and the new head in one
   * transaction, and resolves with the first number once all of it is durable. Two writers can
   * never be handed the same number, and a failure writes nothing.
   *
   * With `opts.id`, the append is idempotent: an id already appended writes nothing and
   * resolves with the first number it got then (a caller that expected a new head sees it
   * did not move). With `opts.fence`, a store shared by several processes refuses the append
   * with {@link StaleFenceError} unless the token is still the current one (a paused
   * ex-leader cannot write); a store one process owns by a file lock has no use for it.
   */
  appendLog(log: LogKeys, values: readonly unknown[], opts?: AppendOptions): Promise<number>;
  /**
   * Sets `key` only while `fence` is current (see {@link appendLog}); plain `set` where the
   * store has no fencing.
   * @throws StaleFenceError when a newer leader holds the fence.
   */
  setFenced?(key: string, value: unknown, fence: Fence): Promise<void>;
  /**
   * Sets `key` to expire `ttlMs` from now, only when it is absent (or expired); resolves true
   * when this call set it. Atomic across every process sharing the store (one Redis command, one
   * SQLite transaction), so two replicas can never both claim the same key. Replay protection
   * of signed webhooks claims event ids with it.
   */
  setIfAbsent?(key: string, value: unknown, ttlMs: number): Promise<boolean>;
  /** Sets `key` to expire `ttlMs` from now: it reads as absent afterwards. */
  setExpiring?(key: string, value: unknown, ttlMs: number): Promise<void>;
  /**
   * The leader lease, on a store several processes share without a file lock (Redis);
   * absent elsewhere (one process owns the store and always leads).
   */
  leaderLease?(owner: string, ttlMs: number): LeaderLease;
  close(): Promise<void>;
}

/** A fencing token and the key holding the current one. */
export interface Fence {
  key: string;
  token: number;
}

export interface AppendOptions {
  /** Idempotency key of this append (kept for {@link APPEND_ID_TTL_MS}). */
  id?: string;
  fence?: Fence;
}

/** How long an append id is remembered: far longer than any retry or failover. */
export const APPEND_ID_TTL_MS = 7 * 24 * 3_600_000;

/**
 * A lease that at most one process holds at a time, with a fencing token that grows on every
 * acquisition (SPEC §8: exactly one replica runs the loop).
 */
export interface LeaderLease {
  /** The key whose value is the current fencing token (for {@link Fence}). */
  readonly fenceKey: string;
  /**
   * Takes the lease when nobody holds it, or extends it when this owner does. Resolves with
   * the fencing token while held, `undefined` when another owner holds it.
   */
  acquire(): Promise<number | undefined>;
  /** Extends the lease held with `token`; false when it is no longer ours. */
  renew(token: number): Promise<boolean>;
  /** Gives the lease up (a clean shutdown): another replica can lead at once. */
  release(token: number): Promise<void>;
}

/** A write refused because a newer leader took the fence. */
export class StaleFenceError extends Error {
  readonly code = 'stale_fence';
  constructor(token: number | undefined) {
    super(token === undefined ? 'not the leader: this replica holds no lease' : `fencing token ${token} is stale: another replica leads now`);
    this.name = 'StaleFenceError';
  }
}

/** Where a log lives: record `n` under `prefix + n zero-padded to pad digits`, its last number under `headKey`. */
export interface LogKeys {
  headKey: string;
  prefix: string;
  pad: number;
}

/** Key of record `seq` of `log`. */
export function logKey(log: LogKeys, seq: number): string {
  return `${log.prefix}${String(seq).padStart(log.pad, '0')}`;
}

/** A stored record that cannot be decoded (torn write, disk damage, a hand edit). */
export class CorruptRecordError extends Error {
  readonly key: string;
  constructor(key: string, cause: unknown) {
    super(`record ${key} cannot be decoded: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'CorruptRecordError';
    this.key = key;
  }
}
