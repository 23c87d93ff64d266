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
   */
  appendLog(log: LogKeys, values: readonly unknown[]): Promise<number>;
  close(): Promise<void>;
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
