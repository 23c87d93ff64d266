/**
 * What the Mattermost transport remembers across restarts, in the bot's own store (one backup,
 * one Redis, as Matrix's sync position): the events it delivered (so a WebSocket event and the
 * same event read again by a catch-up count once), the time of the last event it saw (where a
 * catch-up starts), and the reactions it counted on each of its posts (so a reaction removed
 * while the bot was away is noticed, and its removal is one event). Keys live under
 * `mattermost:<bot user id>:`.
 */
import type { KeyValueStore } from '../../ports/store.js';

/** How long a delivered event id is remembered: far longer than any outage a catch-up covers. */
export const SEEN_TTL_MS = 14 * 24 * 3_600_000;

/** `user|emoji` → when the reaction was made (ms). */
export type ReactionSet = Record<string, number>;

export class MattermostStore {
  readonly #store: KeyValueStore;
  #prefix: string | undefined;
  #closed = false;

  constructor(store: KeyValueStore) {
    this.#store = store;
  }

  /** Scopes every key to the bot's user id; called once `users/me` has answered. */
  bind(userId: string): void {
    this.#prefix = `mattermost:${userId}:`;
  }

  close(): void {
    this.#closed = true;
  }

  #key(k: string): string {
    if (!this.#prefix) throw new Error('mattermost store used before the bot user was known');
    return this.#prefix + k;
  }

  async seen(eventId: string): Promise<boolean> {
    return (await this.#store.get(this.#key(`seen:${eventId}`))) !== undefined;
  }

  async markSeen(eventId: string): Promise<void> {
    if (this.#closed) return;
    const key = this.#key(`seen:${eventId}`);
    if (this.#store.setExpiring) await this.#store.setExpiring(key, 1, SEEN_TTL_MS);
    else await this.#store.set(key, 1);
  }

  /** Time (ms, server clock) of the last event seen; undefined before the first start. */
  async cursor(): Promise<number | undefined> {
    const v = await this.#store.get<number>(this.#key('cursor'));
    return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
  }

  /** Moves the cursor forward only (events can arrive out of order). */
  async advance(atMs: number): Promise<void> {
    if (this.#closed || !Number.isFinite(atMs)) return;
    const now = await this.cursor();
    if (now === undefined || atMs > now) await this.#store.set(this.#key('cursor'), atMs);
  }

  async reactions(postId: string): Promise<ReactionSet> {
    return (await this.#store.get<ReactionSet>(this.#key(`reactions:${postId}`))) ?? {};
  }

  async setReaction(postId: string, user: string, emoji: string, at: number | undefined): Promise<void> {
    if (this.#closed) return;
    const set = { ...(await this.reactions(postId)) };
    const k = `${user}|${emoji}`;
    if (at === undefined) delete set[k];
    else set[k] = at;
    await this.#store.set(this.#key(`reactions:${postId}`), set);
  }
}
