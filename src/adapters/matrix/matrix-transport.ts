/**
 * Reprise on Matrix (SPEC §9, issue 10 item 8), on matrix-bot-sdk's `MatrixClient`, with zero
 * ingress: everything comes in over `/sync`.
 *
 * Out: the card is an `m.notice` thread root, the analysis and notices go in its `m.thread`,
 * state changes edit the card in place (`m.replace`). The outbox's idempotency key becomes the
 * send's transaction id, so a retried send is the same event. In: reactions on the bot's own
 * messages, `!reprise` commands and thread replies of the configured rooms (inbound rules in
 * matrix-inbound). The sync position is kept in the bot's store and moves only once the sink has
 * taken a batch's events, so a restart neither replays nor misses anything.
 *
 * End-to-end encrypted rooms are not supported: the transport refuses to start in one, and
 * refuses to post into a room that turns encryption on.
 */
import { createHash } from 'node:crypto';
import { backoffDelay } from '../../core/backoff.js';
import type { Destination, IntentSink, MessageRef, ResponseTarget } from '../../core/chat/chat-types.js';
import { DeliveryError } from '../../core/chat/chat-types.js';
import type { CardView, DetailView, EphemeralView, ReplyView } from '../../core/chat/thread-view.js';
import type { ChatTransport, DeliveryOptions } from '../../ports/chat-transport.js';
import type { Logger } from '../../ports/logger.js';
import type { KeyValueStore } from '../../ports/store.js';
import { toDeliveryError } from './matrix-errors.js';
import { TRANSPORT } from './matrix-inbound.js';
import { MatrixReceiver } from './matrix-receiver.js';
import { MatrixStore } from './matrix-store.js';
import { cardContent, cardEditContent, fit, inThread, renderEphemeral, replyContent, type MatrixMessageContent } from './render-matrix.js';
import { routeSdkLogs } from './sdk-logger.js';
import { describe, SyncClient } from './sync-client.js';

export interface MatrixTransportOptions {
  /** Client-server API base URL (`MATRIX_HOMESERVER_URL`), e.g. `https://matrix.example.org`. */
  homeserverUrl: string;
  /** The bot user's access token (`MATRIX_ACCESS_TOKEN`). */
  accessToken: string;
  /**
   * Rooms the bot serves (`!id:server`, or `#alias:server`, resolved at start). Inbound events
   * from any other room are ignored, invites only to these are accepted, and posts go only here.
   */
  rooms: string[];
  /** Where a destination without a channel goes; default the first of `rooms`. */
  defaultRoom?: string;
  /** The bot's store: the sync position and remembered reactions live there. */
  store: KeyValueStore;
  logger: Logger;
  /** Default `!reprise`. */
  commandPrefix?: string;
  /** How long one `/sync` long-poll waits for news (ms). Default 30 000. */
  syncTimeoutMs?: number;
  /** Timeline events per room in one sync before gaps are filled from `/messages`. Default 50. */
  timelineLimit?: number;
  /**
   * Retry after a failed sync or start: doubling from `initialMs` to `maxMs`, and never sooner
   * than a rate-limited call's `retry_after_ms`. Default 1 s → 60 s.
   */
  backoff?: { initialMs: number; maxMs: number };
  /** How retries wait (tests record the delays instead of sleeping); default a timer. */
  sleep?: (ms: number) => Promise<void>;
}

const DEFAULTS = { commandPrefix: '!reprise', syncTimeoutMs: 30_000, timelineLimit: 50, backoff: { initialMs: 1_000, maxMs: 60_000 } };
/** Longest gap (in `/messages` pages of 100) filled after downtime. */
const GAP_PAGES = 50;

/** The sync filter: only what the transport reads. Constant, so a restart does not register a new one. */
function syncFilter(limit: number): Record<string, unknown> {
  return {
    presence: { not_types: ['*'] },
    account_data: { not_types: ['*'] },
    room: {
      timeline: { limit, types: ['m.room.message', 'm.reaction', 'm.room.redaction', 'm.room.member', 'm.room.encryption'] },
      state: { types: ['m.room.encryption', 'm.room.member'], lazy_load_members: true },
      ephemeral: { not_types: ['*'] },
      account_data: { not_types: ['*'] },
    },
  };
}

/**
 * The transaction id of a send: derived from the outbox's idempotency key, the room and the event
 * type, so the same outbox item retried is one event, and one key can never collide across rooms.
 */
export function transactionId(room: string, eventType: string, idempotencyKey: string): string {
  return `rp1.${createHash('sha256').update(`${room}\u0000${eventType}\u0000${idempotencyKey}`).digest('base64url').slice(0, 32)}`;
}

/** Thrown by `start` when the bot must not run in a room: encryption is on. */
export class EncryptedRoomError extends Error {
  constructor(readonly room: string) {
    super(
      `Matrix room ${room} has end-to-end encryption enabled; Reprise does not support encrypted rooms ` +
        '(it could neither read reactions nor send readable messages there). Use an unencrypted room, ' +
        'or remove it from MATRIX_ROOM_ID.',
    );
    this.name = 'EncryptedRoomError';
  }
}

export class MatrixTransport implements ChatTransport {
  readonly name = TRANSPORT;
  readonly inlineDetail = false;
  readonly #opts: MatrixTransportOptions & typeof DEFAULTS;
  readonly #log: Logger;
  readonly #store: MatrixStore;
  readonly #client: SyncClient;
  /** Configured rooms by id; aliases map to ids once resolved. */
  readonly #rooms = new Set<string>();
  readonly #aliases = new Map<string, string>();
  readonly #encrypted = new Set<string>();
  /** Rooms whose encryption state was read since start. */
  readonly #checked = new Set<string>();
  readonly #receiver: MatrixReceiver;
  #started = false;
  #closed = false;
  #startRetry: ReturnType<typeof setTimeout> | undefined;

  constructor(opts: MatrixTransportOptions) {
    if (opts.rooms.length === 0) throw new Error('matrix: no room configured (set MATRIX_ROOM_ID)');
    this.#opts = { ...DEFAULTS, ...opts };
    this.#log = opts.logger.child({ component: 'matrix' });
    this.#store = new MatrixStore(opts.store, this.#log);
    for (const r of opts.rooms) if (r.startsWith('!')) this.#rooms.add(r);
    this.#client = new SyncClient(opts.homeserverUrl, opts.accessToken, this.#store, {
      handler: (kind, room, e) => this.#receiver.handle(kind, room, e),
      wanted: (room) => this.#rooms.has(room),
      logger: this.#log,
      backoff: this.#opts.backoff,
      ...(opts.sleep ? { sleep: opts.sleep } : {}),
      gapPages: GAP_PAGES,
      pageSize: 100,
    });
    this.#client.syncingTimeout = this.#opts.syncTimeoutMs;
    this.#receiver = new MatrixReceiver({
      client: this.#client,
      store: this.#store,
      log: this.#log,
      prefix: this.#opts.commandPrefix,
      rooms: this.#rooms,
      joined: async (room) => {
        await this.#checkEncryption(room);
        if (this.#encrypted.has(room)) this.#log.error({ room }, new EncryptedRoomError(room).message);
      },
      encrypted: (room) => {
        this.#encrypted.add(room);
        this.#log.error({ room }, new EncryptedRoomError(room).message);
      },
    });
  }

  /**
   * Checks who the bot is, joins the configured rooms it is invited to, refuses encrypted rooms,
   * and starts syncing. A homeserver that is down is retried in the background (sends fail
   * retryably meanwhile); a rejected token or an encrypted room throws at once.
   */
  async start(sink: IntentSink): Promise<void> {
    if (this.#started) throw new Error('matrix transport already started');
    this.#started = true;
    this.#receiver.sink = sink;
    await this.#tryStart(1);
  }

  /** Sets up, or schedules the next try after the `failures`-th failure in a row (1 = the first). */
  async #tryStart(failures: number): Promise<void> {
    try {
      await this.#setup();
    } catch (err) {
      const d = err instanceof EncryptedRoomError ? undefined : toDeliveryError(err, 'start');
      if (!d?.retryable || this.#closed)
        throw err instanceof EncryptedRoomError ? err : new Error(`matrix: cannot start: ${d?.message ?? String(err)}`, { cause: err });
      // A rate-limited start waits what the homeserver asked, never less than the backoff.
      const policy = { baseMs: this.#opts.backoff.initialMs, maxMs: this.#opts.backoff.maxMs };
      const wait = backoffDelay(policy, failures, { serverWaitMs: d.retryAfterMs, floorMs: backoffDelay(policy, failures) });
      this.#log.warn(
        { err: describe(err), retryInMs: wait, ...(d.retryAfterMs === undefined ? {} : { retryAfterMs: d.retryAfterMs }) },
        'matrix: homeserver not reachable at start; retrying in the background',
      );
      const retry = (): void => {
        this.#tryStart(failures + 1).catch((e: unknown) => this.#log.error({ err: e instanceof Error ? e.message : String(e) }, 'matrix: giving up starting'));
      };
      if (this.#opts.sleep) void this.#opts.sleep(wait).then(() => !this.#closed && retry());
      else this.#startRetry = setTimeout(retry, wait);
    }
  }

  /**
   * A person's display name (the profile API); undefined when they have none or no profile is
   * visible (`M_NOT_FOUND`, 404). Any other failure throws a DeliveryError (429 with its delay).
   */
  async displayName(userId: string): Promise<string | undefined> {
    try {
      const profile = (await this.#client.getUserProfile(userId)) as { displayname?: unknown };
      return typeof profile.displayname === 'string' && profile.displayname.trim() !== '' ? profile.displayname : undefined;
    } catch (err) {
      const e = err as { errcode?: unknown; statusCode?: unknown } | undefined;
      if (e?.errcode === 'M_NOT_FOUND' || e?.statusCode === 404) return undefined;
      throw toDeliveryError(err, `profile of ${userId}`);
    }
  }

  async #setup(): Promise<void> {
    const userId = await this.#client.getUserId();
    this.#store.bind(userId);
    let displayName: string | undefined;
    try {
      const profile = (await this.#client.getUserProfile(userId)) as { displayname?: unknown };
      if (typeof profile.displayname === 'string') displayName = profile.displayname;
    } catch {
      // A display name only helps recognise mentions; the user id is enough.
    }
    this.#receiver.identify(userId, displayName);
    for (const r of this.#opts.rooms) {
      if (r.startsWith('!') || this.#aliases.has(r)) continue;
      const id = await this.#client.resolveRoom(r);
      this.#aliases.set(r, id);
      this.#rooms.add(id);
    }
    const joined = new Set(await this.#client.getJoinedRooms());
    for (const room of this.#rooms) {
      if (!joined.has(room)) {
        try {
          await this.#client.joinRoom(room);
          joined.add(room);
        } catch (err) {
          this.#log.error({ room, err: describe(err) }, `matrix: not in room ${room}; invite ${userId} to it (the bot joins configured rooms when invited)`);
          continue;
        }
      }
      await this.#checkEncryption(room);
      if (this.#encrypted.has(room)) throw new EncryptedRoomError(room);
    }
    if (this.#closed) return;
    await this.#client.start(syncFilter(this.#opts.timelineLimit));
    // Receiving from here on: the first sync fixes "now" (history before it is not replayed).
    await this.#client.firstSync;
    this.#log.info({ user: userId, rooms: [...this.#rooms] }, 'matrix: syncing');
  }

  async #checkEncryption(room: string): Promise<void> {
    try {
      await this.#client.getRoomStateEvent(room, 'm.room.encryption', '');
      this.#encrypted.add(room);
    } catch (err) {
      const e = err as { errcode?: unknown; statusCode?: unknown };
      if (e.errcode !== 'M_NOT_FOUND' && e.statusCode !== 404) throw err;
    }
    this.#checked.add(room);
  }

  async post(to: Destination, card: CardView, _detail: DetailView | undefined, opts: DeliveryOptions): Promise<MessageRef> {
    const room = await this.#sendable(to.channel, 'post');
    const id = await this.#send(room, cardContent(card), opts.idempotencyKey, `post to ${room}`);
    return { transport: TRANSPORT, channel: room, id };
  }

  async reply(root: MessageRef, view: ReplyView, opts: DeliveryOptions): Promise<MessageRef> {
    const room = await this.#sendable(root.channel, 'reply', root);
    const thread = root.thread ?? root.id;
    const id = await this.#send(room, replyContent(view, thread), opts.idempotencyKey, `reply in ${room}`, thread);
    return { transport: TRANSPORT, channel: room, id, thread };
  }

  async update(ref: MessageRef, card: CardView, opts: DeliveryOptions): Promise<void> {
    const room = await this.#sendable(ref.channel, 'update', ref);
    await this.#send(room, cardEditContent(card, ref.id), opts.idempotencyKey, `edit in ${room}`);
  }

  /**
   * Matrix has no ephemeral messages: the answer is a notice in the thread the command was typed
   * in (or a new thread on it) that everyone in the room can read, addressed to the user when
   * the target names one.
   */
  async ephemeral(to: ResponseTarget, view: EphemeralView, opts: DeliveryOptions): Promise<void> {
    if (to.kind === 'response_url') throw new DeliveryError('matrix: a response_url is a Slack answer; Matrix cannot use it', { retryable: false });
    const channel = to.kind === 'thread' ? to.ref.channel : to.channel;
    const room = await this.#sendable(channel, 'answer', to.kind === 'thread' ? to.ref : undefined);
    const thread = to.kind === 'thread' ? (to.ref.thread ?? to.ref.id) : to.thread;
    const user = to.kind === 'ephemeral' ? to.user : undefined;
    const wrap = (c: MatrixMessageContent): MatrixMessageContent => (thread ? inThread(c, thread) : c);
    const content = fit((o) => renderEphemeral(view, user, o), wrap);
    // The outbox id is the transaction id: a retried answer is one message.
    await this.#send(room, content, opts.idempotencyKey, `answer in ${room}`, thread);
  }

  /** `https://matrix.to/#/<room>/<event>?via=<the room's server>` (the Matrix spec's matrix.to form, identifiers encoded). */
  permalink(ref: { channel: string; id: string }): Promise<string | undefined> {
    return Promise.resolve(matrixPermalink(ref.channel, ref.id));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#receiver.close();
    clearTimeout(this.#startRetry);
    this.#client.stop();
    // The batch in hand finishes (or is abandoned unpersisted); the long-poll is left to expire.
    await this.#client.idle;
    this.#store.close();
  }

  /** The room a send goes to, checked: ours, known, not encrypted. */
  async #sendable(channel: string, what: string, ref?: MessageRef): Promise<string> {
    if (this.#closed) throw new DeliveryError(`matrix ${what}: transport closed`, { retryable: true });
    if (ref && ref.transport !== TRANSPORT)
      throw new DeliveryError(`matrix ${what}: ${ref.transport} message reference given to the Matrix transport`, { retryable: false });
    const named = channel === '' ? (this.#opts.defaultRoom ?? this.#opts.rooms[0]!) : channel;
    const room = named.startsWith('#') ? this.#aliases.get(named) : named;
    if (!room) throw new DeliveryError(`matrix ${what}: room alias ${named} is not resolved yet (homeserver unreachable at start?)`, { retryable: true });
    if (!this.#rooms.has(room)) {
      throw new DeliveryError(`matrix ${what}: room ${room} is not configured; add it to the Matrix rooms (MATRIX_ROOM_ID) so its reactions are read too`, {
        retryable: false,
      });
    }
    if (!this.#checked.has(room)) {
      try {
        await this.#checkEncryption(room);
      } catch (err) {
        throw toDeliveryError(err, `${what} (reading the room's encryption state)`);
      }
    }
    if (this.#encrypted.has(room)) throw new DeliveryError(new EncryptedRoomError(room).message, { retryable: false });
    return room;
  }

  async #send(room: string, content: MatrixMessageContent, key: string, what: string, thread?: string): Promise<string> {
    const type = 'm.room.message';
    const path = `/_matrix/client/v3/rooms/${encodeURIComponent(room)}/send/${encodeURIComponent(type)}/${encodeURIComponent(transactionId(room, type, key))}`;
    let eventId: unknown;
    try {
      const res = (await this.#client.doRequest('PUT', path, null, content)) as { event_id?: unknown };
      eventId = res.event_id;
    } catch (err) {
      const d = toDeliveryError(err, what);
      this.#log.warn({ room, retryable: d.retryable, retryAfterMs: d.retryAfterMs, err: describe(err) }, `matrix: ${what} failed`);
      throw d;
    }
    if (typeof eventId !== 'string') throw new DeliveryError(`matrix ${what}: homeserver answered without an event_id`, { retryable: true });
    this.#receiver.sent(eventId, thread);
    return eventId;
  }
}

/** Builds the Matrix transport; routes matrix-bot-sdk's logs into `opts.logger`. */
export function createMatrixTransport(opts: MatrixTransportOptions): MatrixTransport {
  routeSdkLogs(opts.logger);
  return new MatrixTransport(opts);
}

/** The matrix.to link to event `eventId` in room `roomId`; undefined for ids that are not a room's and an event's. */
export function matrixPermalink(roomId: string, eventId: string): string | undefined {
  if (!/^[!#][^:\s]+:\S+$/.test(roomId) || !/^\$\S+$/.test(eventId)) return undefined;
  const enc = (id: string): string => encodeURIComponent(id).replace(/!/g, '%21');
  const server = roomId.slice(roomId.indexOf(':') + 1);
  return `https://matrix.to/#/${enc(roomId)}/${enc(eventId)}?via=${encodeURIComponent(server)}`;
}
