/**
 * matrix-bot-sdk's `MatrixClient` with a sync loop that neither replays nor misses events.
 *
 * The SDK's own loop advances its sync position before the batch is processed, emits events
 * without waiting for async listeners, and backs off a fixed 5–15 s. Here (overriding only the
 * loop; requests, filters, whoami and event dispatch stay the SDK's):
 * - each event of a batch is handed to an async handler and awaited; the position moves on —
 *   in memory and in the store — only once the whole batch was handled, so a failed batch is
 *   fetched again (the handler skips what it already delivered) and a crash replays it;
 * - the first sync ever (no stored position) starts from now: its timeline is history;
 * - a `limited` timeline (more happened than one sync returns, e.g. after downtime) is filled
 *   from `/messages` back to the previous position, so nothing in between is skipped;
 * - a rate-limited call (`M_LIMIT_EXCEEDED`) is retried after the homeserver's `retry_after_ms`,
 *   never sooner.
 */
import { MatrixClient, type IStorageProvider } from 'matrix-bot-sdk';
import { backoffDelay } from '../../core/backoff.js';
import type { Logger } from '../../ports/logger.js';
import { toDeliveryError } from './matrix-errors.js';

/** An event as the client-server API returns it. */
export interface RawEvent {
  event_id?: string;
  type?: string;
  sender?: string;
  state_key?: string;
  redacts?: string;
  content?: Record<string, unknown>;
  unsigned?: Record<string, unknown>;
  room_id?: string;
}

/** What the loop hands on: joined-room timeline events and our own membership changes. */
export type SyncEmit = 'room.event' | 'room.invite' | 'room.leave' | 'room.join';
export type SyncHandler = (kind: SyncEmit, roomId: string, event: RawEvent) => Promise<void>;

export interface SyncClientOptions {
  handler: SyncHandler;
  /** Rooms whose gaps are worth filling (the configured ones). */
  wanted: (roomId: string) => boolean;
  logger: Logger;
  /**
   * Backoff after a failed sync or batch: doubles from `initialMs` to `maxMs`. A homeserver that
   * says how long to wait (`M_LIMIT_EXCEEDED` with `retry_after_ms`, on `/sync`, a gap's
   * `/messages` or an event lookup of the batch) is waited at least that long.
   */
  backoff: { initialMs: number; maxMs: number };
  /** How the loop waits between attempts (tests record the delays instead of sleeping); default a timer. */
  sleep?: (ms: number) => Promise<void>;
  /** Most `/messages` pages (of `pageSize` events) fetched to fill one room's gap. */
  gapPages: number;
  pageSize: number;
}

/** Thrown by the handler when the transport is closing: the batch is abandoned, not persisted. */
export class SyncStopped extends Error {
  constructor() {
    super('matrix sync stopped');
    this.name = 'SyncStopped';
  }
}

const EMITS: ReadonlySet<string> = new Set<SyncEmit>(['room.event', 'room.invite', 'room.leave', 'room.join']);

export class SyncClient extends MatrixClient {
  readonly #opts: SyncClientOptions;
  readonly #store: IStorageProvider;
  #stopped = false;
  #loop: Promise<void> = Promise.resolve();
  #wake: (() => void) | undefined;
  #since: string | null = null;
  #busy: Promise<void> | undefined;
  #settled!: () => void;
  /** Resolves after the first batch was handled, or the first attempt failed. */
  readonly firstSync: Promise<void> = new Promise((resolve) => {
    this.#settled = resolve;
  });

  constructor(homeserverUrl: string, accessToken: string, storage: IStorageProvider, opts: SyncClientOptions) {
    super(homeserverUrl, accessToken, storage);
    this.#store = storage;
    this.#opts = opts;
  }

  /** Called by the SDK's `start()` once filters are set up. */
  protected override startSyncInternal(): Promise<void> {
    this.#stopped = false;
    this.#loop = this.#run();
    return Promise.resolve();
  }

  override stop(): void {
    this.#stopped = true;
    super.stop();
    this.#wake?.();
    this.#settled();
  }

  /** Resolves when the loop has ended (after {@link stop}, once an in-flight long-poll returns). */
  get stopped(): Promise<void> {
    return this.#loop;
  }

  /** Resolves once the batch being handled (if any) is done: what `close` waits for. */
  get idle(): Promise<void> {
    return (this.#busy ?? Promise.resolve()).catch(() => undefined);
  }

  async #run(): Promise<void> {
    let token = await this.#store.getSyncToken();
    const policy = { baseMs: this.#opts.backoff.initialMs, maxMs: this.#opts.backoff.maxMs };
    let failures = 0;
    const emit = async (type: string, ...payload: unknown[]): Promise<void> => {
      if (!EMITS.has(type)) return;
      if (this.#stopped) throw new SyncStopped();
      await this.#opts.handler(type as SyncEmit, payload[0] as string, payload[1] as RawEvent);
    };
    if (this.#stopped) this.#settled();
    // The first sync catches up and returns at once: a long-poll there would hold the bot's
    // start for up to 30 s after every restart in a quiet room.
    const longPoll = this.syncingTimeout;
    this.syncingTimeout = 0;
    while (!this.#stopped) {
      try {
        const response = (await this.doSync(token as string)) as { next_batch?: unknown } | undefined;
        this.syncingTimeout = longPoll;
        if (this.#stopped) return;
        const next = typeof response?.next_batch === 'string' ? response.next_batch : undefined;
        if (!next) throw new Error('sync answer without next_batch');
        this.#since = token;
        // A batch handled to its end is persisted even if a stop came meanwhile: every event in
        // it was delivered (the handler throws on stop before delivering another).
        const work = (async () => {
          await this.processSync(response, emit);
          await this.#store.setSyncToken(next);
        })();
        this.#busy = work;
        try {
          await work;
        } finally {
          this.#busy = undefined;
        }
        token = next;
        failures = 0;
        this.#settled();
      } catch (err) {
        this.#settled();
        if (this.#stopped || err instanceof SyncStopped) return;
        // The homeserver's own number wins over ours: retrying sooner only earns another 429.
        const asked = toDeliveryError(err, 'sync').retryAfterMs;
        failures++;
        const wait = backoffDelay(policy, failures, { serverWaitMs: asked, floorMs: backoffDelay(policy, failures) });
        this.#opts.logger.warn(
          { err: describe(err), retryInMs: wait, ...(asked === undefined ? {} : { retryAfterMs: asked }) },
          'matrix: sync failed; retrying from the last handled position',
        );
        await this.#sleep(wait);
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const sleep = this.#opts.sleep;
      const t = sleep ? undefined : setTimeout(done, ms);
      if (sleep) void sleep(ms).then(done);
      function done(): void {
        clearTimeout(t);
        resolve();
      }
      this.#wake = done;
    });
  }

  protected override async processSync(raw: unknown, emitFn?: (type: string, ...payload: unknown[]) => Promise<unknown>): Promise<unknown> {
    const join = (raw as { rooms?: { join?: Record<string, { timeline?: { events?: unknown[]; limited?: boolean; prev_batch?: string } }> } } | undefined)
      ?.rooms?.join;
    if (join) {
      if (this.#since === null) {
        let skipped = 0;
        for (const room of Object.values(join)) {
          skipped += room.timeline?.events?.length ?? 0;
          if (room.timeline) room.timeline.events = [];
        }
        if (skipped > 0) this.#opts.logger.info({ skipped }, 'matrix: first sync; earlier room history is not replayed');
      } else {
        await this.#fillGaps(join, this.#since);
      }
    }
    return super.processSync(raw, emitFn);
  }

  async #fillGaps(join: Record<string, { timeline?: { events?: unknown[]; limited?: boolean; prev_batch?: string } }>, since: string): Promise<void> {
    for (const [roomId, room] of Object.entries(join)) {
      const tl = room.timeline;
      if (!tl?.limited || typeof tl.prev_batch !== 'string' || !this.#opts.wanted(roomId)) continue;
      const older: unknown[] = [];
      let from = tl.prev_batch;
      let complete = false;
      for (let page = 0; page < this.#opts.gapPages; page++) {
        const res = (await this.doRequest('GET', `/_matrix/client/v3/rooms/${encodeURIComponent(roomId)}/messages`, {
          dir: 'b',
          from,
          to: since,
          limit: this.#opts.pageSize,
        })) as { chunk?: unknown[]; end?: string };
        const chunk = res.chunk ?? [];
        older.push(...chunk);
        if (!res.end || chunk.length === 0) {
          complete = true;
          break;
        }
        from = res.end;
      }
      if (!complete) this.#opts.logger.warn({ room: roomId, fetched: older.length }, 'matrix: gap too long to fill; older events of this gap are skipped');
      tl.events = [...older.reverse(), ...(tl.events ?? [])];
      this.#opts.logger.info({ room: roomId, filled: older.length }, 'matrix: filled a gap in the timeline');
    }
  }
}

/** A short description of an SDK error for logs (never its request, which carries headers). */
export function describe(err: unknown): string {
  if (typeof err !== 'object' || err === null) return String(err);
  const e = err as { errcode?: unknown; error?: unknown; statusCode?: unknown; message?: unknown; code?: unknown };
  if (typeof e.errcode === 'string') return `${e.errcode}${typeof e.error === 'string' ? `: ${e.error}` : ''}`;
  if (typeof e.statusCode === 'number') return `HTTP ${e.statusCode}`;
  return `${typeof e.message === 'string' ? e.message : String(err)}${typeof e.code === 'string' ? ` (${e.code})` : ''}`;
}
