/**
 * The durable outbox (SPEC §9 "Delivery never holds up intake"). What the bot must say is
 * recorded in the ledger with what it is about (an `outbox` event in the same transaction as
 * the open or resolve); this worker delivers it afterwards, records `delivered` (or
 * `outbox_failed`), and retries with backoff — honouring a surface's `Retry-After` /
 * `retry_after_ms` — across restarts, since pending items are part of the replayed read model.
 *
 * Order: items of one thread on one surface go in the order they were recorded (a lane); a
 * reply or an update waits for its thread's root, so a resolve that arrived before its thread
 * was delivered is delivered after it. Lanes run concurrently: a slow thread holds up no other.
 */
import type { ChatTransport } from '../../ports/chat-transport.js';
import type { Clock, Timer } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { DeliveryEnd, LoopObserver } from '../../ports/loop-observer.js';
import { DeliveryError, type MessageRef } from '../chat/chat-types.js';
import { patchCard, type CardView } from '../chat/thread-view.js';
import type { LedgerEvent, OutboxEvent } from '../ledger-events.js';
import type { OutboxItem as OutboxRecord } from '../ledger/ledger-types.js';
import type { LedgerTx } from '../ledger/ledger-options.js';
import type { DeepReadonly, LedgerReader } from '../ledger/ledger-reader.js';

/** What the worker needs from the ledger: its reader, one event of the log by seq, and transactions. */
export interface OutboxLedger {
  read: Pick<LedgerReader, 'pendingOutbox' | 'pendingOutboxCount' | 'thread' | 'cardSeq'>;
  /** One event of the log (what an outbox item carries is read when it is sent). */
  eventAt(seq: number): Promise<LedgerEvent | undefined>;
  transaction(fn: (tx: Pick<LedgerTx, 'record'>) => Promise<void>): Promise<unknown>;
}

type OutboxItem = DeepReadonly<OutboxRecord>;

export interface OutboxOptions {
  /** Lanes delivering at once. */
  concurrency: number;
  /** First retry delay; doubled per attempt up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** An item still undelivered this long after it was recorded is given up (recorded). */
  maxAgeMs: number;
  /** The same for a private answer: the person who asked has moved on. */
  answerMaxAgeMs: number;
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = {
  concurrency: 8,
  baseDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  maxAgeMs: 24 * 3_600_000,
  answerMaxAgeMs: 30 * 60_000,
};

interface Attempt {
  n: number;
  nextAt: number;
  lastError?: string;
}

/** Lane of an item: one thread on one surface. */
const laneOf = (i: OutboxItem): string => `${i.transport}|${i.openId ?? i.id}`;

export class OutboxWorker {
  readonly #ledger: OutboxLedger;
  readonly #transports: ReadonlyMap<string, ChatTransport>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: OutboxOptions;
  readonly #observer: Pick<LoopObserver, 'deliveryEnded'> | undefined;
  readonly #attempts = new Map<string, Attempt>();
  readonly #running = new Set<string>();
  #timer: Timer | undefined;
  #stopped = true;
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #scheduled = false;
  #idle: Array<() => void> = [];
  /** Delivery results waiting to be recorded together; their lanes stay busy until then. */
  #results: Array<{ events: LedgerEvent[]; lane: string }> = [];
  #flushing: Promise<void> | undefined;

  constructor(deps: {
    ledger: OutboxLedger;
    transports: ReadonlyMap<string, ChatTransport>;
    clock: Clock;
    logger: Logger;
    options?: Partial<OutboxOptions>;
    observer?: Pick<LoopObserver, 'deliveryEnded'>;
  }) {
    this.#ledger = deps.ledger;
    this.#transports = deps.transports;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = { ...DEFAULT_OUTBOX_OPTIONS, ...deps.options };
    this.#observer = deps.observer;
  }

  start(): void {
    this.#stopped = false;
    this.kick();
  }

  /**
   * Something was recorded: look at the outbox soon. Kicks coalesce into one pass, run as a
   * macrotask so a burst of deliveries never keeps the event loop from other requests.
   */
  kick(): void {
    if (this.#stopped) return;
    this.#again = true;
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#pass = this.#pass.then(() => this.#run());
    });
  }

  /** Resolves once nothing is deliverable right now (all delivered, or waiting for a retry). */
  idle(): Promise<void> {
    if (this.#running.size === 0 && !this.#again && !this.#scheduled) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /**
   * On shutdown: lets what is deliverable go out, for at most `timeoutMs`; what is left stays
   * pending in the ledger and goes out at the next start.
   */
  async drain(timeoutMs: number): Promise<void> {
    this.kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    if (timer) clearTimeout(timer);
  }

  /** Stops scheduling; in-flight deliveries finish and are recorded. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#clock.clearTimeout(this.#timer);
    await this.#pass;
    while (this.#running.size > 0) await new Promise((r) => setTimeout(r, 10));
    await this.#flushing;
  }

  /** Undelivered items and how their retries stand (status, readiness detail, metrics). */
  status(): { pending: number; retrying: number; oldestAt?: string } {
    const pending = this.#ledger.read.pendingOutboxCount();
    if (pending === 0) return { pending: 0, retrying: 0 };
    let oldestAt: string | undefined;
    for (const i of this.#ledger.read.pendingOutbox()) {
      oldestAt = i.at;
      break;
    }
    let retrying = 0;
    for (const a of this.#attempts.values()) if (a.n > 0) retrying++;
    return { pending, retrying, ...(oldestAt ? { oldestAt } : {}) };
  }

  async #run(): Promise<void> {
    if (this.#stopped || !this.#again) return;
    this.#again = false;
    const now = this.#clock.now().getTime();
    const seenLanes = new Set<string>();
    let nextWake = Number.POSITIVE_INFINITY;
    const given: LedgerEvent[] = [];
    const gaveUp: DeliveryEnd[] = [];
    const ready: Array<{ item: OutboxItem; lane: string }> = [];
    for (const item of this.#ledger.read.pendingOutbox()) {
      // Recorded by a transaction that has not committed yet: its turn comes after the commit.
      if (item.seq === undefined) continue;
      const lane = laneOf(item);
      if (seenLanes.has(lane)) continue; // only the head of a lane may go
      seenLanes.add(lane);
      if (this.#running.has(lane)) continue;
      const age = now - Date.parse(item.at);
      if (Number.isFinite(age) && age > (item.op === 'answer' ? this.#opts.answerMaxAgeMs : this.#opts.maxAgeMs)) {
        const a = this.#attempts.get(item.id);
        given.push({
          type: 'outbox_failed',
          id: item.id,
          reason: `undelivered after ${Math.round(age / 60_000)} min${a?.lastError ? `: ${a.lastError}` : ''}`,
          at: new Date(now).toISOString(),
        });
        gaveUp.push({ transport: item.transport, op: item.op, outcome: 'failed', reason: 'expired' });
        continue;
      }
      const attempt = this.#attempts.get(item.id);
      if (attempt && attempt.nextAt > now) {
        nextWake = Math.min(nextWake, attempt.nextAt);
        continue;
      }
      if (item.op !== 'post' && item.op !== 'answer' && this.#root(item.openId!, item.transport) === undefined) {
        // Its thread's root is neither delivered nor pending on this lane: it never will be.
        given.push({ type: 'outbox_failed', id: item.id, reason: `its thread was never delivered on ${item.transport}`, at: new Date(now).toISOString() });
        gaveUp.push({ transport: item.transport, op: item.op, outcome: 'failed', reason: 'orphaned' });
        continue;
      }
      ready.push({ item, lane });
      // Enough heads to choose from; the rest wait for the next pass.
      if (ready.length >= 4 * (this.#opts.concurrency - this.#running.size)) break;
    }
    // A thread's first message goes before other threads' later ones (stable: otherwise in
    // recorded order): in an alert storm every incident shows up before the analyses fill in.
    ready.sort((a, b) => Number(b.item.op === 'post') - Number(a.item.op === 'post'));
    for (const { item, lane } of ready) {
      if (this.#running.size >= this.#opts.concurrency) {
        nextWake = Math.min(nextWake, now + 50);
        break;
      }
      this.#running.add(lane);
      void this.#deliver(item, lane);
    }
    if (given.length > 0) {
      for (const g of given) this.#log.warn({ outboxId: (g as { id: string }).id, reason: (g as { reason: string }).reason }, 'outbox item given up');
      const recorded = await this.#record(given).then(
        () => true,
        (err: unknown) => (this.#log.error({ err }, 'recording given-up outbox items failed; they stay pending'), false),
      );
      if (recorded) for (const g of gaveUp) this.#observer?.deliveryEnded(g);
      this.#again = true;
    }
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#again) {
      this.kick();
      return;
    }
    if (Number.isFinite(nextWake) && !this.#stopped) {
      this.#timer = this.#clock.setTimeout(() => this.kick(), Math.max(5, nextWake - this.#clock.now().getTime())).unref();
    }
    if (this.#running.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
  }

  async #deliver(item: OutboxItem, lane: string): Promise<void> {
    const transport = this.#transports.get(item.transport);
    let events: LedgerEvent[];
    let ended: DeliveryEnd;
    try {
      if (!transport) throw new DeliveryError(`transport ${item.transport} is not configured in this process`, { retryable: false });
      const ref = await this.#send(transport, item);
      this.#attempts.delete(item.id);
      ended = { transport: item.transport, op: item.op, outcome: 'delivered' };
      const fingerprint = item.openId === undefined ? undefined : (this.#ledger.read.thread(item.openId)?.fingerprint ?? 'unknown');
      events =
        item.openId === undefined
          ? // A private answer belongs to no thread: it is done, and registers no message.
            [{ type: 'delivered', transport: item.transport, messageRef: item.id, outboxId: item.id, root: false, at: this.#clock.now().toISOString() }]
          : ref
            ? [
                {
                  type: 'delivered',
                  openId: item.openId,
                  ...(fingerprint !== undefined ? { fingerprint } : {}),
                  transport: item.transport,
                  messageRef: ref.id,
                  channel: ref.channel,
                  outboxId: item.id,
                  root: item.op === 'post',
                  at: this.#clock.now().toISOString(),
                },
              ]
            : [
                {
                  type: 'delivered',
                  openId: item.openId,
                  ...(fingerprint !== undefined ? { fingerprint } : {}),
                  transport: item.transport,
                  messageRef: `${item.id}`,
                  outboxId: item.id,
                  root: false,
                  at: this.#clock.now().toISOString(),
                },
              ];
    } catch (err) {
      const retryable = !(err instanceof DeliveryError) || err.retryable;
      const message = err instanceof Error ? err.message : String(err);
      if (!retryable) {
        this.#log.error({ err, outboxId: item.id, transport: item.transport, op: item.op }, 'delivery refused for good; giving up');
        events = [{ type: 'outbox_failed', id: item.id, reason: message.slice(0, 500), at: this.#clock.now().toISOString() }];
        this.#attempts.delete(item.id);
        ended = { transport: item.transport, op: item.op, outcome: 'failed', reason: 'refused' };
      } else {
        const prev = this.#attempts.get(item.id);
        const n = (prev?.n ?? 0) + 1;
        const backoff = Math.min(this.#opts.maxDelayMs, this.#opts.baseDelayMs * 2 ** (n - 1));
        const wait = err instanceof DeliveryError && err.retryAfterMs !== undefined ? Math.max(err.retryAfterMs, 0) : backoff * (0.8 + 0.4 * Math.random());
        this.#attempts.set(item.id, { n, nextAt: this.#clock.now().getTime() + wait, lastError: message.slice(0, 300) });
        this.#log.warn(
          { outboxId: item.id, transport: item.transport, op: item.op, attempt: n, retryInMs: Math.round(wait), err: message },
          'delivery failed; will retry',
        );
        events = [];
        ended = { transport: item.transport, op: item.op, outcome: 'retry' };
      }
    }
    this.#observer?.deliveryEnded(ended);
    if (events.length > 0) {
      // The lane stays busy until its result is recorded: a pass must not send the item again.
      this.#results.push({ events, lane });
      void this.#flush();
      return;
    }
    this.#running.delete(lane);
    this.kick();
  }

  /**
   * Records delivery results in batches: one transaction (one fsync) for whatever finished
   * while the previous one was being written. A failed write loses no delivery: the items stay
   * pending and are sent again (at least once).
   */
  #flush(): Promise<void> {
    if (this.#flushing) return this.#flushing;
    this.#flushing = (async () => {
      while (this.#results.length > 0) {
        const batch = this.#results.splice(0);
        try {
          await this.#record(batch.flatMap((b) => b.events));
        } catch (err) {
          this.#log.error({ err, events: batch.length }, 'recording delivery results failed; the items stay pending and will be retried');
        }
        for (const b of batch) this.#running.delete(b.lane);
        this.kick();
      }
      this.#flushing = undefined;
    })();
    return this.#flushing;
  }

  /** Records delivery results durably, in one transaction. */
  async #record(events: readonly LedgerEvent[]): Promise<void> {
    await this.#ledger.transaction(async (tx) => {
      for (const e of events) tx.record(e);
    });
  }

  /** The thread root of an incident on a surface, once delivered. */
  #root(openId: string, transport: string): { channel: string; id: string } | undefined {
    return this.#ledger.read.thread(openId)?.roots[transport];
  }

  /** The message an item carries, read from the log; undefined when it cannot be read. */
  async #payload(item: OutboxItem): Promise<Pick<OutboxEvent, 'view' | 'detail' | 'to'> | undefined> {
    if (item.seq === undefined) return undefined;
    const e = await this.#ledger.eventAt(item.seq);
    if (e?.type !== 'outbox' || e.id !== item.id) return undefined;
    return { view: e.view, ...(e.detail ? { detail: e.detail } : {}), ...(e.to ? { to: e.to } : {}) };
  }

  async #send(transport: ChatTransport, item: OutboxItem): Promise<MessageRef | undefined> {
    const opts = { idempotencyKey: item.id };
    const payload = await this.#payload(item);
    if (!payload) throw new DeliveryError(`the message of outbox item ${item.id} cannot be read from the ledger`, { retryable: false });
    const { view } = payload;
    const malformed = (): DeliveryError => new DeliveryError(`outbox item ${item.id} (${item.op}) carries a ${view.kind} view`, { retryable: false });
    switch (item.op) {
      case 'post':
        if (view.kind !== 'card') throw malformed();
        return transport.post(
          { transport: item.transport, channel: item.channel ?? '' },
          view,
          payload.detail?.kind === 'detail' ? payload.detail : undefined,
          opts,
        );
      case 'answer':
        if (view.kind !== 'ephemeral' || !payload.to) throw malformed();
        await transport.ephemeral(payload.to, view, opts);
        return undefined;
      case 'reply':
      case 'update': {
        const root = this.#root(item.openId!, item.transport)!;
        const ref: MessageRef = { transport: item.transport, channel: root.channel, id: root.id };
        if (item.op === 'reply') {
          if (view.kind !== 'detail' && view.kind !== 'notice') throw malformed();
          return transport.reply(ref, view, opts);
        }
        if (view.kind !== 'card' && view.kind !== 'card_patch') throw malformed();
        let card: CardView;
        if (view.kind === 'card_patch') {
          const base = await cardAsItStands(this.#ledger, item.openId!, item.transport);
          if (!base) throw new DeliveryError(`the card of thread ${item.openId} on ${item.transport} cannot be read from the ledger`, { retryable: false });
          card = patchCard(base, view);
        } else card = view;
        await transport.update(ref, card, opts);
        return undefined;
      }
    }
  }
}

/** A thread's card on a surface as it stands: the posted one (read from the log) with every change recorded since. */
export async function cardAsItStands(ledger: Pick<OutboxLedger, 'read' | 'eventAt'>, openId: string, transport: string): Promise<CardView | undefined> {
  const seq = ledger.read.cardSeq(openId, transport);
  const e = seq === undefined ? undefined : await ledger.eventAt(seq);
  if (e?.type !== 'outbox' || e.view.kind !== 'card') return undefined;
  const changes = ledger.read.thread(openId)?.cardPatches?.[transport];
  return changes ? patchCard(e.view, { ...changes, kind: 'card_patch' }) : e.view;
}
