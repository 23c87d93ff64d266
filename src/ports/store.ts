/**
 * Durable key/value storage behind the ledger (SPEC §8). Implemented over keyv in adapters/keyv.
 * `set` resolves only once the value is durable: callers acknowledge webhooks after it.
 */
export interface KeyValueStore {
  get<T>(key: string): Promise<T | undefined>;
  getMany<T>(keys: readonly string[]): Promise<Array<T | undefined>>;
  set(key: string, value: unknown): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}
