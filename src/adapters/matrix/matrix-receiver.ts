/**
 * The receiving half of the Matrix transport: what the sync loop hands over, in the configured
 * rooms only, translated (matrix-inbound) and given to the bot's sink. Joins configured rooms
 * on invite (and no others), notices encryption being turned on, and remembers who sent recent
 * events so that "is this reaction on the bot's message?" rarely costs a request.
 */
import { LRUCache } from 'lru-cache';
import type { IntentSink } from '../../core/chat/chat-types.js';
import type { Logger } from '../../ports/logger.js';
import { translate, type EventInfo, type InboundContext } from './matrix-inbound.js';
import type { MatrixStore } from './matrix-store.js';
import { describe, SyncStopped, type RawEvent, type SyncEmit } from './sync-client.js';

/** Events remembered per process (delivered ids, senders of looked-up events). */
const CACHE_SIZE = 5_000;

export interface MatrixReceiverDeps {
  client: { joinRoom(room: string): Promise<string>; getRawEvent(room: string, id: string): Promise<unknown> };
  store: MatrixStore;
  log: Logger;
  prefix: string;
  /** The configured rooms (ids), read live: aliases are added once resolved. */
  rooms: ReadonlySet<string>;
  /** After joining a configured room on invite (the transport checks its encryption). */
  joined(room: string): Promise<void>;
  /** A configured room turned encryption on. */
  encrypted(room: string): void;
}

const threadOf = (content: Record<string, unknown> | undefined): string | undefined => {
  const rel = content?.['m.relates_to'] as { rel_type?: unknown; event_id?: unknown } | undefined;
  return rel?.rel_type === 'm.thread' && typeof rel.event_id === 'string' ? rel.event_id : undefined;
};

export class MatrixReceiver {
  readonly #deps: MatrixReceiverDeps;
  readonly #delivered = new LRUCache<string, true>({ max: CACHE_SIZE });
  readonly #info = new LRUCache<string, EventInfo>({ max: CACHE_SIZE });
  #userId: string | undefined;
  #displayName: string | undefined;
  #closed = false;
  sink: IntentSink | undefined;

  constructor(deps: MatrixReceiverDeps) {
    this.#deps = deps;
  }

  identify(userId: string, displayName: string | undefined): void {
    this.#userId = userId;
    this.#displayName = displayName;
  }

  /** The bot sent `eventId` (in `thread`): reactions on it count, with no lookup. */
  sent(eventId: string, thread?: string): void {
    if (this.#userId) this.#info.set(eventId, { sender: this.#userId, ...(thread ? { thread } : {}) });
  }

  close(): void {
    this.#closed = true;
  }

  /**
   * One event of a sync batch. Resolves once the sink took what it meant; throws (and the batch
   * is read again) when the sink or a lookup failed, or {@link SyncStopped} once closed.
   */
  async handle(kind: SyncEmit, room: string, e: RawEvent): Promise<void> {
    if (this.#closed) throw new SyncStopped();
    const { log, rooms } = this.#deps;
    const ours = rooms.has(room);
    if (kind === 'room.invite') {
      if (!ours) {
        log.info({ room, inviter: e.sender }, 'matrix: ignoring an invite to a room that is not configured');
        return;
      }
      try {
        await this.#deps.client.joinRoom(room);
      } catch (err) {
        // A withdrawn invite or a ban must not stall the sync; the next invite is another chance.
        log.error({ room, err: describe(err) }, 'matrix: could not join a configured room on invite');
        return;
      }
      log.info({ room }, 'matrix: joined a configured room on invite');
      await this.#deps.joined(room);
      return;
    }
    if (kind === 'room.leave') {
      if (ours) log.error({ room, by: e.sender }, 'matrix: the bot was removed from a configured room; invite it again');
      return;
    }
    if (kind !== 'room.event' || !ours || !e.event_id || !this.#userId) return;
    if (this.#delivered.get(e.event_id)) return;
    if (e.type === 'm.room.encryption' && e.state_key === '') this.#deps.encrypted(room);
    if (e.sender) {
      const thread = threadOf(e.content);
      this.#info.set(e.event_id, { sender: e.sender, ...(thread ? { thread } : {}) });
    }
    const event = await translate(room, e, this.#context(this.#userId));
    if (event) {
      if (this.#closed || !this.sink) throw new SyncStopped();
      await this.sink(event);
    }
    this.#delivered.set(e.event_id, true);
  }

  #context(botUserId: string): InboundContext {
    const { store, prefix } = this.#deps;
    return {
      botUserId,
      ...(this.#displayName ? { botDisplayName: this.#displayName } : {}),
      prefix,
      lookup: (room, id) => this.#lookup(room, id),
      rememberReaction: (id, r) => store.rememberReaction(id, r),
      recallReaction: (id) => store.recallReaction(id),
    };
  }

  async #lookup(room: string, id: string): Promise<EventInfo | undefined> {
    const cached = this.#info.get(id);
    if (cached) return cached;
    let raw: RawEvent;
    try {
      raw = (await this.#deps.client.getRawEvent(room, id)) as RawEvent;
    } catch (err) {
      // Not there or not visible: not the bot's. Anything else fails the batch, which is retried.
      const status = (err as { statusCode?: unknown }).statusCode;
      if (status === 404 || status === 403) return undefined;
      throw err;
    }
    if (typeof raw.sender !== 'string') return undefined;
    const thread = threadOf(raw.content);
    const info: EventInfo = { sender: raw.sender, ...(thread ? { thread } : {}) };
    this.#info.set(id, info);
    return info;
  }
}
