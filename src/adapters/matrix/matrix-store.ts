/**
 * matrix-bot-sdk's storage (`IStorageProvider`) over the bot's own store port, so the sync
 * position survives a restart in the same place as the ledger: one backup, one Redis, no second
 * file. Keys live under `matrix:<user id>:` (a store may serve several bots). It also keeps what
 * the transport must remember across restarts: the reactions it delivered, so their later
 * redaction (whose content the homeserver strips) can be delivered as a removal.
 */
import type { IFilterInfo, IStorageProvider } from 'matrix-bot-sdk';
import type { KeyValueStore } from '../../ports/store.js';
import type { Logger } from '../../ports/logger.js';

/** A reaction the transport delivered, enough to deliver its removal. */
export interface RememberedReaction {
  room: string;
  user: string;
  target: string;
  thread?: string;
  reaction: string;
}

export class MatrixStore implements IStorageProvider {
  readonly #store: KeyValueStore;
  readonly #log: Logger;
  #prefix: string | undefined;
  #closed = false;

  constructor(store: KeyValueStore, log: Logger) {
    this.#store = store;
    this.#log = log;
  }

  /** Scopes every key to the bot's user id; called once whoami has answered. */
  bind(userId: string): void {
    this.#prefix = `matrix:${userId}:`;
  }

  /** After close nothing is written: a late sync must not touch a store the bot has closed. */
  close(): void {
    this.#closed = true;
  }

  #key(k: string): string {
    if (!this.#prefix) throw new Error('matrix store used before the bot user was known');
    return this.#prefix + k;
  }

  async setSyncToken(token: string | null): Promise<void> {
    if (this.#closed) return;
    if (token === null) {
      // The SDK clears the token when it registers a new filter. Starting over would skip what
      // happened while the bot was down (an initial sync is not replayed); the old position is
      // still valid under the new filter, so it is kept.
      if (await this.getSyncToken()) this.#log.info('matrix: sync filter changed; keeping the stored sync position');
      return;
    }
    await this.#store.set(this.#key('sync_token'), token);
  }

  async getSyncToken(): Promise<string | null> {
    return (await this.#store.get<string>(this.#key('sync_token'))) ?? null;
  }

  async setFilter(filter: IFilterInfo): Promise<void> {
    if (this.#closed) return;
    await this.#store.set(this.#key('filter'), filter);
  }

  async getFilter(): Promise<IFilterInfo> {
    // The SDK treats a falsy filter as "none stored"; its type does not say so.
    return (await this.#store.get<IFilterInfo>(this.#key('filter'))) ?? (null as unknown as IFilterInfo);
  }

  async storeValue(key: string, value: string): Promise<void> {
    if (this.#closed) return;
    await this.#store.set(this.#key(`kv:${key}`), value);
  }

  async readValue(key: string): Promise<string | null> {
    return (await this.#store.get<string>(this.#key(`kv:${key}`))) ?? null;
  }

  async rememberReaction(eventId: string, r: RememberedReaction): Promise<void> {
    await this.#store.set(this.#key(`reaction:${eventId}`), r);
  }

  async recallReaction(eventId: string): Promise<RememberedReaction | undefined> {
    return this.#store.get<RememberedReaction>(this.#key(`reaction:${eventId}`));
  }
}
