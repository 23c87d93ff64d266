/**
 * The receiving half of the Mattermost transport: WebSocket events and catch-ups (posts changed
 * since the last event seen, read through REST after every (re)connection), one at a time, in
 * order, translated (mattermost-inbound) and given to the bot's sink — each event once: its id
 * is remembered in the store once the sink took it, so the same post or reaction read again by
 * a catch-up (or after a restart) is nothing. A sink that fails leaves its event unremembered,
 * and a catch-up from before it is scheduled.
 */
import { LRUCache } from 'lru-cache';
import type { IntentSink } from '../../core/chat/chat-types.js';
import type { Logger } from '../../ports/logger.js';
import { isPost, type MattermostApi, type MmAcknowledgement, type MmPost, type MmReaction } from './mattermost-api.js';
import {
  fromAcknowledgement,
  fromPost,
  fromReaction,
  jsonField,
  reactionMeaning,
  type InboundContext,
  type PostInfo,
  type Translation,
} from './mattermost-inbound.js';
import type { MattermostStore } from './mattermost-store.js';
import type { SocketEvent } from './mattermost-socket.js';

/** A catch-up reads from a little before the last event seen (events can arrive out of order). */
const CATCH_UP_OVERLAP_MS = 60_000;

export interface ReceiverDeps {
  api: Pick<MattermostApi, 'post' | 'postsSince'> & Partial<Pick<MattermostApi, 'user'>>;
  store: MattermostStore;
  log: Logger;
  /** Retry of a catch-up after a failure. */
  retryMs: number;
}

export class MattermostReceiver {
  readonly #deps: ReceiverDeps;
  readonly #info = new LRUCache<string, PostInfo>({ max: 5_000 });
  /** Usernames by user id; a failed lookup is asked again after a while, never per event. */
  readonly #names = new LRUCache<string, Promise<string | undefined>>({ max: 5_000, ttl: 3_600_000 });
  #ctx: InboundContext | undefined;
  #chain: Promise<void> = Promise.resolve();
  #handled = 0;
  #closed = false;
  #retry: NodeJS.Timeout | undefined;
  /** Earliest time of an event the sink failed; a catch-up starts there. */
  #failedAt: number | undefined;
  sink: IntentSink | undefined;

  constructor(deps: ReceiverDeps) {
    this.#deps = deps;
  }

  identify(ctx: Omit<InboundContext, 'lookup'>): void {
    this.#ctx = { ...ctx, lookup: (id) => this.#lookup(id), userName: (id) => this.#userName(id) };
  }

  /** The bot made `post`: reactions on it count with no lookup. */
  sent(post: PostInfo & { id: string }): void {
    this.#info.set(post.id, { user_id: post.user_id, channel_id: post.channel_id, ...(post.root_id ? { root_id: post.root_id } : {}) });
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
  }

  /** Resolves once everything queued so far is handled. */
  get idle(): Promise<void> {
    return this.#chain;
  }

  /** WebSocket events handled so far (taken in, ignored or failed), in the order received. */
  get handled(): number {
    return this.#handled;
  }

  onEvent(e: SocketEvent): void {
    this.#enqueue(() => this.#event(e).finally(() => void this.#handled++));
  }

  catchUp(): void {
    this.#enqueue(() => this.#catchUp());
  }

  #enqueue(job: () => Promise<void>): void {
    this.#chain = this.#chain.then(job).catch((err: unknown) => {
      this.#deps.log.error({ err: err instanceof Error ? err.message : String(err) }, 'mattermost: handling an event failed');
    });
  }

  async #event(e: SocketEvent): Promise<void> {
    const ctx = this.#ctx;
    if (!ctx || this.#closed) return;
    switch (e.event) {
      case 'posted': {
        const post = jsonField<MmPost>(e.data, 'post');
        if (!isPost(post)) return;
        this.#remember(post);
        await this.#take(await fromPost(post, ctx), post.create_at);
        return;
      }
      case 'reaction_added':
      case 'reaction_removed': {
        const r = jsonField<MmReaction>(e.data, 'reaction');
        if (!r || typeof r !== 'object') return;
        await this.#reaction(r, e.event === 'reaction_removed', ctx);
        return;
      }
      case 'post_acknowledgement_added': {
        const a = jsonField<MmAcknowledgement>(e.data, 'acknowledgement');
        if (!a || typeof a !== 'object') return;
        await this.#take(await fromAcknowledgement(a, ctx), typeof a.acknowledged_at === 'number' ? a.acknowledged_at : undefined);
        return;
      }
      default:
        return;
    }
  }

  async #reaction(r: MmReaction, removed: boolean, ctx: InboundContext): Promise<void> {
    const { store } = this.#deps;
    const key = `${String(r.user_id)}|${String(r.emoji_name)}`;
    const since = removed ? (await store.reactions(String(r.post_id)))[key] : undefined;
    const t = await fromReaction(r, removed, ctx, since);
    const took = await this.#take(t, removed ? undefined : r.create_at);
    if (took && typeof r.post_id === 'string' && typeof r.user_id === 'string' && typeof r.emoji_name === 'string')
      await store.setReaction(r.post_id, r.user_id, r.emoji_name, removed ? undefined : typeof r.create_at === 'number' ? r.create_at : 0);
  }

  /** Hands an intent to the sink once; true when it was taken now or before (a translation that skips is false). */
  async #take(t: Translation, at: number | undefined): Promise<boolean> {
    const { store, log } = this.#deps;
    if ('skip' in t) {
      log.debug({ reason: t.skip }, 'mattermost event is not for the bot');
      if (at !== undefined) await store.advance(at);
      return false;
    }
    const ev = t.intent;
    if (await store.seen(ev.eventId)) return true;
    if (!this.sink || this.#closed) return false;
    try {
      await this.sink(ev);
    } catch (err) {
      log.error(
        { eventId: ev.eventId, type: ev.type, err: err instanceof Error ? err.message : String(err) },
        'mattermost: the bot could not take an event; it is read again',
      );
      this.#failed(at ?? Date.now());
      return false;
    }
    await store.markSeen(ev.eventId);
    if (at !== undefined && this.#failedAt === undefined) await store.advance(at);
    return true;
  }

  #failed(at: number): void {
    this.#failedAt = Math.min(this.#failedAt ?? at, at);
    clearTimeout(this.#retry);
    this.#retry = setTimeout(() => this.catchUp(), this.#deps.retryMs);
    this.#retry.unref();
  }

  /** Posts changed since the last event seen in every served channel: new posts, reactions added and removed, acknowledgements. */
  async #catchUp(): Promise<void> {
    const ctx = this.#ctx;
    if (!ctx || this.#closed) return;
    const { store, api, log } = this.#deps;
    const cursor = await store.cursor();
    const from = Math.min(cursor ?? Date.now(), this.#failedAt ?? Infinity) - CATCH_UP_OVERLAP_MS;
    this.#failedAt = undefined;
    let latest = cursor ?? 0;
    for (const channel of ctx.channels) {
      let posts: MmPost[];
      try {
        posts = await api.postsSince(channel, from);
      } catch (err) {
        log.warn({ channel, err: err instanceof Error ? err.message : String(err) }, 'mattermost: catch-up failed; retrying');
        this.#failed(from + CATCH_UP_OVERLAP_MS);
        return;
      }
      posts.sort((a, b) => a.create_at - b.create_at);
      for (const post of posts) {
        this.#remember(post);
        if (post.create_at >= from) await this.#take(await fromPost(post, ctx), undefined);
        if (post.user_id === ctx.botUserId && (post.delete_at ?? 0) === 0) await this.#reconcile(post, ctx);
        latest = Math.max(latest, post.create_at, post.update_at ?? 0);
      }
    }
    if (this.#failedAt === undefined && latest > 0) await store.advance(latest);
    log.debug({ from }, 'mattermost: caught up');
  }

  /** A bot post read back: its reactions against those remembered (added and removed while away), its acknowledgements. */
  async #reconcile(post: MmPost, ctx: InboundContext): Promise<void> {
    if (!post.metadata || typeof post.metadata !== 'object') return;
    const now = Array.isArray(post.metadata.reactions) ? post.metadata.reactions : [];
    const known = await this.#deps.store.reactions(post.id);
    const current = new Set<string>();
    for (const r of now) {
      if (!r || typeof r !== 'object' || !reactionMeaning(String(r.emoji_name))) continue;
      current.add(`${r.user_id}|${r.emoji_name}`);
      if (known[`${r.user_id}|${r.emoji_name}`] === undefined) await this.#reaction({ ...r, post_id: post.id }, false, ctx);
    }
    for (const key of Object.keys(known)) {
      if (current.has(key)) continue;
      const [user_id = '', emoji_name = ''] = key.split('|');
      await this.#reaction({ user_id, emoji_name, post_id: post.id, create_at: 0 }, true, ctx);
    }
    for (const a of Array.isArray(post.metadata.acknowledgements) ? post.metadata.acknowledgements : []) {
      if (a && typeof a === 'object') await this.#take(await fromAcknowledgement({ ...a, post_id: post.id }, ctx), undefined);
    }
  }

  #remember(post: MmPost): void {
    this.#info.set(post.id, { user_id: post.user_id, channel_id: post.channel_id, ...(post.root_id ? { root_id: post.root_id } : {}) });
  }

  #userName(id: string): Promise<string | undefined> {
    const known = this.#names.get(id);
    if (known) return known;
    const user = this.#deps.api.user;
    const asked = user
      ? user.call(this.#deps.api, id).then(
          (u) => (typeof u.username === 'string' && u.username !== '' ? u.username : undefined),
          () => {
            this.#names.set(id, Promise.resolve(undefined), { ttl: 300_000 });
            return undefined;
          },
        )
      : Promise.resolve(undefined);
    this.#names.set(id, asked);
    return asked;
  }

  async #lookup(id: string): Promise<PostInfo | undefined> {
    const cached = this.#info.get(id);
    if (cached) return cached;
    const post = await this.#deps.api.post(id);
    if (!post) return undefined;
    this.#remember(post);
    return this.#info.get(id);
  }
}
