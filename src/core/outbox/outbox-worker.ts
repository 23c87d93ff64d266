/**
 * The durable outbox (SPEC §9 "Delivery never holds up intake"). What the bot must say is
 * recorded in the ledger with what it is about (an `outbox` event in the same transaction as
 * the open or resolve); this worker delivers it afterwards, records `delivered` (or
 * `outbox_failed`), and retries with backoff — honouring a surface's `Retry-After` /
 * `retry_after_ms` — across restarts, since pending items are part of the replayed read model.
 *
 * Exactly once where a send is not idempotent (a Slack post): every send carries its item's id,
 * and an item whose last attempt has no known outcome (a timeout, a reset, a crash or a
 * failover between the send and its record, a record that failed) is first looked up on the
 * surface (`ChatTransport.find`) and the message found adopted instead of sent again. Sends go
 * only while `mayDeliver` says so (a replica holding its lease with margin).
 *
 * What no check before a send can stop — a process paused after its last check with the
 * request still in its HTTP client sends it when it wakes, after the next leader looked the item
 * up (not found) and posted it — is taken back afterwards, never by losing the card:
 * - a send answered when `mayDeliver` no longer holds is not recorded (the write would be
 *   fenced); the process watches the shared ledger for the item for `duplicateWatchMs` and
 *   deletes its own message once the ledger records another one (the leader adopts it otherwise);
 * - a lookup that finds an item more than once adopts the oldest and deletes the others;
 * - an item delivered while it was suspect is looked up again `duplicateSweepMs` after its
 *   record, and what carries its id besides the recorded message is deleted.
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
  /** `events` reads the shared log (what the leader recorded, when this process follows). */
  read: Pick<LedgerReader, 'pendingOutbox' | 'pendingOutboxCount' | 'thread' | 'cardSeq' | 'events'>;
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
  /**
   * A post or reply answered after this process lost the lead is not recorded; the process
   * watches the ledger this long for the message the leader records, deleting its own once
   * that is another. 0: no watch (a late duplicate waits for the leader's sweep).
   */
  duplicateWatchMs: number;
  /** After recording an item that may have been sent before, look for late duplicates of it this long after (each delay once). */
  duplicateSweepMs: readonly number[];
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = {
  concurrency: 8,
  baseDelayMs: 1000,
  maxDelayMs: 5 * 60_000,
  maxAgeMs: 24 * 3_600_000,
  answerMaxAgeMs: 30 * 60_000,
  duplicateWatchMs: 30_000,
  duplicateSweepMs: [20_000, 120_000],
};

/** How soon a worker that may not send looks again. */
const NOT_NOW_MS = 1000;
/** How often a duplicate watch reads the ledger again. */
const WATCH_EVERY_MS = 1000;
/** A card edit delivered with the one before it in its lane. */
type Rider = { item: OutboxItem; view: Extract<OutboxEvent['view'], { kind: 'card_patch' }> };

/** Most queued card edits one edit stands for. */
const MAX_RIDERS = 500;
/** A sweep also takes what comes due this soon after it. */
const SWEEP_ALONG_MS = 1000;

type Place = { channel: string; thread?: string };

/** A post or reply this process sent without recording it (fenced): watched until the ledger says which message it became. */
interface Watch {
  item: OutboxItem;
  /** The message this process made; undefined when its answer never came (then looked up). */
  own: MessageRef | undefined;
  where: Place;
  until: number;
  /** The message the ledger records for the item, once read. */
  recorded?: string;
}

/** A delivered item's place, read again later for a late duplicate. */
interface Sweep {
  id: string;
  transport: string;
  where: Place;
  since: number;
  /** The recorded message: never deleted. */
  keep: string;
  due: number[];
}

/** One delivery's result waiting to be recorded; its lane stays busy until then. */
interface Result {
  events: LedgerEvent[];
  lane: string;
  item?: OutboxItem;
  /** The message sent (a post or reply), watched for if its record fails. */
  sent?: MessageRef;
  /** Other messages carrying the item's id (a lookup found it more than once): deleted once the adopted one is recorded. */
  extras?: readonly MessageRef[];
  /** The item may have been sent before: its place is swept for late duplicates. */
  sweep?: boolean;
}

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
  readonly #observer: Pick<LoopObserver, 'deliveryEnded' | 'duplicateRemoved'> | undefined;
  readonly #attempts = new Map<string, Attempt>();
  /** Items that may have been sent already (an attempt of unknown outcome, or pending when this worker started): looked up before a send. */
  readonly #suspect = new Set<string>();
  readonly #mayDeliver: () => boolean;
  readonly #running = new Set<string>();
  #timer: Timer | undefined;
  #stopped = true;
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #scheduled = false;
  #idle: Array<() => void> = [];
  /** Delivery results waiting to be recorded together; their lanes stay busy until then. */
  #results: Result[] = [];
  #flushing: Promise<void> | undefined;
  /** Fenced sends, by outbox id; they outlive `stop` (a replica that lost the lead takes back its own duplicates). */
  readonly #watches = new Map<string, Watch>();
  /** The log is read for watches from after this seq. */
  #watchedTo = 0;
  #watchTimer: Timer | undefined;
  #watching: Promise<void> | undefined;
  #sweeps: Sweep[] = [];
  #sweepTimer: Timer | undefined;
  #sweeping: Promise<void> | undefined;

  constructor(deps: {
    ledger: OutboxLedger;
    transports: ReadonlyMap<string, ChatTransport>;
    clock: Clock;
    logger: Logger;
    options?: Partial<OutboxOptions>;
    observer?: Pick<LoopObserver, 'deliveryEnded' | 'duplicateRemoved'>;
    /** Checked before each send (a replica: the lease is held with margin). Default: always. */
    mayDeliver?: () => boolean;
  }) {
    this.#mayDeliver = deps.mayDeliver ?? (() => true);
    this.#ledger = deps.ledger;
    this.#transports = deps.transports;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = { ...DEFAULT_OUTBOX_OPTIONS, ...deps.options };
    this.#observer = deps.observer;
  }

  /**
   * Starts delivering. What is pending now may have been sent by an earlier process (or the
   * leader before this one) that died before recording it: each post or reply is looked up
   * before it is sent.
   */
  start(): void {
    this.#stopped = false;
    for (const item of this.#ledger.read.pendingOutbox()) if (item.op === 'post' || item.op === 'reply') this.#suspect.add(item.id);
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
    if (!this.#mayDeliver()) {
      // Not ours to send now (the lease is late or lost): look again soon, send nothing.
      this.#clock.clearTimeout(this.#timer);
      this.#timer = this.#clock.setTimeout(() => this.kick(), NOT_NOW_MS).unref();
      if (this.#running.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    const lookups = new Map<string, Promise<ReadonlyMap<string, readonly MessageRef[]>>>();
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
      void this.#deliver(item, lane, lookups);
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

  async #deliver(item: OutboxItem, lane: string, lookups: Map<string, Promise<ReadonlyMap<string, readonly MessageRef[]>>>): Promise<void> {
    const transport = this.#transports.get(item.transport);
    let events: LedgerEvent[];
    let ended: DeliveryEnd;
    const wasSuspect = this.#suspect.has(item.id);
    let extras: readonly MessageRef[] = [];
    try {
      if (!transport) throw new DeliveryError(`transport ${item.transport} is not configured in this process`, { retryable: false });
      const lookedUp = wasSuspect ? await this.#lookUp(transport, item, lookups) : undefined;
      const found = lookedUp?.[0];
      extras = lookedUp?.slice(1) ?? [];
      if (found === undefined && !this.#mayDeliver()) {
        // The lease went late while this item waited: not sent, not an attempt.
        this.#running.delete(lane);
        this.kick();
        return;
      }
      // Card edits queued behind this one ride along: the card sent is the card as it stands.
      const riders = item.op === 'update' ? await this.#riders(item, lane) : [];
      const ref = found ?? (await this.#send(transport, item, riders));
      if (!found && ref && !this.#mayDeliver()) {
        // Answered after the lease went late or was lost: the bytes left before the process
        // knew. Not recorded (a fenced write); the ledger says later which message the item is.
        this.#suspect.add(item.id);
        this.#watch(item, ref);
        this.#running.delete(lane);
        this.kick();
        return;
      }
      if (found)
        this.#log.info(
          { outboxId: item.id, transport: item.transport, op: item.op, messageRef: found.id },
          'found the message already sent; adopted it, not sent again',
        );
      this.#suspect.delete(item.id);
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
            : [item, ...riders.map((r) => r.item)].map((i) => ({
                type: 'delivered' as const,
                openId: i.openId,
                ...(fingerprint !== undefined ? { fingerprint } : {}),
                transport: i.transport,
                messageRef: `${i.id}`,
                outboxId: i.id,
                root: false,
                at: this.#clock.now().toISOString(),
              }));
    } catch (err) {
      const retryable = !(err instanceof DeliveryError) || err.retryable;
      const message = err instanceof Error ? err.message : String(err);
      // The surface may have acted on it: the next attempt looks for it first.
      if (!(err instanceof DeliveryError) || err.outcomeUnknown) {
        this.#suspect.add(item.id);
        // ... and if the lead went meanwhile, the next leader may send it too: watch for that.
        if (!this.#mayDeliver()) this.#watch(item, undefined);
      }
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
      const d = events[0];
      const sent = d?.type === 'delivered' && d.channel !== undefined ? { transport: item.transport, channel: d.channel, id: d.messageRef } : undefined;
      this.#results.push({
        events,
        lane,
        item,
        ...(sent ? { sent } : {}),
        ...(extras.length > 0 ? { extras } : {}),
        ...(wasSuspect && sent ? { sweep: true } : {}),
      });
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
        let recorded = false;
        try {
          await this.#record(batch.flatMap((b) => b.events));
          recorded = true;
        } catch (err) {
          this.#log.error(
            { err, events: batch.length },
            'recording delivery results failed; the items stay pending and are looked up before they are sent again',
          );
          for (const b of batch) for (const e of b.events) if (e.type === 'delivered' && e.outboxId !== undefined) this.#suspect.add(e.outboxId);
          // A write refused because the lead went (a fence): the next leader may send the item too.
          for (const b of batch) if (b.item && b.sent && !this.#mayDeliver()) this.#watch(b.item, b.sent);
        }
        if (recorded) for (const b of batch) this.#afterRecord(b);
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

  /**
   * The message a suspect item became, if the surface has it: one lookup per channel or thread
   * per pass (shared by the pass's items), reading back from the oldest pending item of the
   * place. A surface without `find` sends idempotently by itself (Matrix transaction ids).
   */
  async #lookUp(
    transport: ChatTransport,
    item: OutboxItem,
    lookups: Map<string, Promise<ReadonlyMap<string, readonly MessageRef[]>>>,
  ): Promise<readonly MessageRef[] | undefined> {
    if (!transport.find || (item.op !== 'post' && item.op !== 'reply')) return undefined;
    const where = this.#place(item);
    const key = `${item.transport}|${where.channel}|${where.thread ?? ''}`;
    let found = lookups.get(key);
    if (!found) {
      let since = Date.parse(item.at);
      for (const other of this.#ledger.read.pendingOutbox()) {
        if (other.transport === item.transport && this.#suspect.has(other.id) && other.op === item.op && (other.channel ?? '') === (item.channel ?? '')) {
          since = Math.min(since, Date.parse(other.at));
        }
      }
      found = transport.find(where, new Date(Number.isFinite(since) ? since : 0));
      lookups.set(key, found);
      found.catch(() => undefined);
    }
    try {
      // Pending, so the ledger records none of them: the oldest is the one kept.
      const refs = (await found).get(item.id);
      return refs && refs.length > 0 ? refs : undefined;
    } catch (err) {
      if (err instanceof DeliveryError && !err.retryable) {
        // A lookup the surface refuses for good (no history scope, a channel named rather than
        // by id): sending again is all that is left — at least once, said in the log.
        this.#log.warn(
          { outboxId: item.id, transport: item.transport, err: err.message },
          'cannot look up whether this message was already sent; sending it (it may show twice) — see docs/operations.md "Exactly once on Slack"',
        );
        return undefined;
      }
      throw err;
    }
  }

  /** Where an item's message shows: its channel (a post) or its thread (a reply). */
  #place(item: OutboxItem): Place {
    const root = item.op === 'reply' ? this.#root(item.openId!, item.transport) : undefined;
    return root ? { channel: root.channel, thread: root.id } : { channel: item.channel ?? '' };
  }

  /** A delivery is recorded: the duplicates a lookup found go, and an item that was suspect is swept later. */
  #afterRecord(b: Result): void {
    const item = b.item;
    if (!item || !b.sent) return;
    for (const extra of b.extras ?? []) void this.#removeDuplicate(item.transport, extra, item.id, 'found with the message adopted');
    if (!b.sweep || this.#opts.duplicateSweepMs.length === 0) return;
    const now = this.#clock.now().getTime();
    const where = item.op === 'reply' ? this.#place(item) : { channel: b.sent.channel };
    this.#sweeps.push({
      id: item.id,
      transport: item.transport,
      where,
      since: Date.parse(item.at),
      keep: b.sent.id,
      due: this.#opts.duplicateSweepMs.map((ms) => now + ms).sort((x, y) => x - y),
    });
    this.#armSweep();
  }

  #armSweep(): void {
    this.#clock.clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    if (this.#sweeps.length === 0) return;
    const next = Math.min(...this.#sweeps.map((s) => s.due[0]!));
    this.#sweepTimer = this.#clock
      .setTimeout(
        () => {
          this.#sweeping ??= this.#sweep().finally(() => {
            this.#sweeping = undefined;
            this.#armSweep();
          });
        },
        Math.max(5, next - this.#clock.now().getTime()),
      )
      .unref();
  }

  /**
   * The late duplicate sweep: each place with an item due is read once (from its oldest item),
   * and every message carrying a due item's id other than the recorded one is deleted — a send
   * of an earlier leader that reached the surface after this one looked the item up.
   */
  async #sweep(): Promise<void> {
    // What comes due within a second goes along: a burst of deliveries is one pass, not many.
    const now = this.#clock.now().getTime() + SWEEP_ALONG_MS;
    const due = this.#sweeps.filter((s) => s.due[0]! <= now);
    const places = new Map<string, Sweep[]>();
    for (const s of due) {
      const key = `${s.transport}|${s.where.channel}|${s.where.thread ?? ''}`;
      places.set(key, [...(places.get(key) ?? []), s]);
    }
    const sweepPlace = async (group: Sweep[]): Promise<void> => {
      const { transport: name, where } = group[0]!;
      const transport = this.#transports.get(name);
      if (!transport?.find || !transport.remove) return;
      let found: ReadonlyMap<string, readonly MessageRef[]>;
      try {
        found = await transport.find(where, new Date(Math.min(...group.map((s) => s.since))));
      } catch (err) {
        this.#log.warn(
          { transport: name, err: err instanceof Error ? err.message : String(err) },
          'late duplicate sweep: lookup failed; trying at the next sweep',
        );
        return;
      }
      for (const s of group) {
        for (const ref of found.get(s.id) ?? []) {
          if (ref.id !== s.keep) await this.#removeDuplicate(name, ref, s.id, 'a late duplicate of the recorded message');
        }
      }
    };
    // Places are read side by side, as many at once as lanes are delivered.
    const queue = [...places.values()];
    await Promise.all(
      Array.from({ length: Math.min(this.#opts.concurrency, queue.length) }, async () => {
        for (let g = queue.shift(); g; g = queue.shift()) await sweepPlace(g);
      }),
    );
    for (const s of due) s.due.shift();
    this.#sweeps = this.#sweeps.filter((s) => s.due.length > 0);
    this.#log.info({ items: due.length, places: places.size, left: this.#sweeps.length }, 'late duplicate sweep');
  }

  /**
   * Watches a send this process could not record: once the shared ledger records the item as
   * another message, this one is a duplicate and is deleted; recorded as this one (the leader
   * adopted it) or never recorded within the watch, it stays.
   */
  #watch(item: OutboxItem, own: MessageRef | undefined): void {
    if (this.#opts.duplicateWatchMs <= 0 || item.seq === undefined || (item.op !== 'post' && item.op !== 'reply')) return;
    const transport = this.#transports.get(item.transport);
    if (!transport?.remove || (!own && !transport.find)) return;
    const prev = this.#watches.get(item.id);
    const until = this.#clock.now().getTime() + this.#opts.duplicateWatchMs;
    this.#watches.set(item.id, { item, own: own ?? prev?.own, where: own?.thread ? { channel: own.channel, thread: own.thread } : this.#place(item), until });
    this.#watchedTo = this.#watches.size === 1 ? item.seq : Math.min(this.#watchedTo, item.seq);
    this.#log.warn(
      { outboxId: item.id, transport: item.transport, op: item.op, ...(own ? { messageRef: own.id } : {}), watchMs: this.#opts.duplicateWatchMs },
      'sent after this process lost the lead: not recorded; watching the ledger for the message the leader records (this one is deleted if it is another)',
    );
    this.#armWatch();
  }

  #armWatch(): void {
    if (this.#watchTimer !== undefined || this.#watches.size === 0) return;
    this.#watchTimer = this.#clock
      .setTimeout(() => {
        this.#watchTimer = undefined;
        this.#watching ??= this.#checkWatches().finally(() => {
          this.#watching = undefined;
          this.#armWatch();
        });
      }, WATCH_EVERY_MS)
      .unref();
  }

  async #checkWatches(): Promise<void> {
    try {
      let to = this.#watchedTo;
      for await (const r of this.#ledger.read.events(this.#watchedTo)) {
        to = r.seq;
        if (!('event' in r)) continue;
        const e = r.event;
        if (e.type === 'delivered' && e.outboxId !== undefined) {
          const w = this.#watches.get(e.outboxId);
          if (w) w.recorded = e.messageRef;
        } else if (e.type === 'outbox_failed' && this.#watches.has(e.id)) {
          this.#endWatch(e.id, 'the leader gave the item up; the message stays');
        }
      }
      this.#watchedTo = to;
    } catch (err) {
      this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'duplicate watch: reading the ledger failed; trying again');
    }
    for (const [id, w] of this.#watches) {
      if (w.recorded !== undefined) {
        if (await this.#settleWatch(w)) continue;
      }
      if (this.#clock.now().getTime() >= w.until) this.#endWatch(id, 'no message recorded for it yet; left for the leader to adopt');
    }
  }

  /** The ledger recorded the item as `w.recorded`: delete this process's message if it is another. True when the watch is over. */
  async #settleWatch(w: Watch): Promise<boolean> {
    const { item, recorded } = w;
    if (w.own?.id === recorded) {
      this.#endWatch(item.id, 'the leader recorded this message; it stays');
      return true;
    }
    const transport = this.#transports.get(item.transport)!;
    let mine: readonly MessageRef[];
    if (w.own) mine = [w.own];
    else {
      try {
        mine = (await transport.find!(w.where, new Date(Date.parse(item.at)))).get(item.id) ?? [];
      } catch (err) {
        this.#log.warn({ outboxId: item.id, err: err instanceof Error ? err.message : String(err) }, 'duplicate watch: lookup failed; trying again');
        return false;
      }
    }
    let ok = true;
    for (const ref of mine)
      if (ref.id !== recorded) ok = (await this.#removeDuplicate(item.transport, ref, item.id, 'the leader recorded another message for it')) && ok;
    if (ok) this.#endWatch(item.id, 'the leader recorded another message; this one was deleted');
    return ok;
  }

  #endWatch(id: string, outcome: string): void {
    if (!this.#watches.delete(id)) return;
    this.#log.info({ outboxId: id, outcome }, 'duplicate watch over');
    if (this.#watches.size > 0) return;
    this.#clock.clearTimeout(this.#watchTimer);
    this.#watchTimer = undefined;
  }

  /** Deletes a duplicate: logged (warn) and counted. False when the surface refused (tried again by the caller, if it can). */
  async #removeDuplicate(transportName: string, ref: MessageRef, outboxId: string, why: string): Promise<boolean> {
    const transport = this.#transports.get(transportName);
    if (!transport?.remove) return false;
    try {
      await transport.remove(ref);
    } catch (err) {
      this.#log.warn(
        { outboxId, transport: transportName, messageRef: ref.id, err: err instanceof Error ? err.message : String(err) },
        'could not delete a duplicate message; it stays (see docs/operations.md "Exactly once on Slack")',
      );
      return false;
    }
    this.#log.warn({ outboxId, transport: transportName, channel: ref.channel, messageRef: ref.id, why }, 'deleted a duplicate message');
    this.#observer?.duplicateRemoved?.({ transport: transportName });
    return true;
  }

  /** Resolves once no duplicate watch or sweep is left (tests, shutdown). */
  async settled(): Promise<void> {
    await this.#watching;
    await this.#sweeping;
  }

  /**
   * Ends the duplicate watches and sweeps (the process is shutting down; the leader's sweep
   * covers what a watch left). `stop` leaves them running: losing the lead is when they matter.
   */
  async dispose(): Promise<void> {
    this.#clock.clearTimeout(this.#watchTimer);
    this.#clock.clearTimeout(this.#sweepTimer);
    this.#watchTimer = this.#sweepTimer = undefined;
    this.#watches.clear();
    this.#sweeps = [];
    await this.settled();
  }

  /**
   * The card edits recorded right after `item` in its lane (committed, nothing else in between),
   * when it and they are all changes to the card (`card_patch`): sending `item` sends the card
   * as it stands — every recorded change folded in — so they are delivered with it. A burst of
   * votes is one edit, not one per vote (a rate limit spent on stale states).
   */
  async #riders(item: OutboxItem, lane: string): Promise<Rider[]> {
    const next: OutboxItem[] = [];
    let after = false;
    for (const other of this.#ledger.read.pendingOutbox()) {
      if (other.id === item.id) {
        after = true;
        continue;
      }
      if (!after || laneOf(other) !== lane) continue;
      if (other.op !== 'update' || other.seq === undefined || next.length >= MAX_RIDERS) break;
      next.push(other);
    }
    if (next.length === 0 || (await this.#payload(item))?.view.kind !== 'card_patch') return [];
    const riders: Rider[] = [];
    for (const other of next) {
      const view = (await this.#payload(other))?.view;
      if (view?.kind !== 'card_patch') break;
      riders.push({ item: other, view });
    }
    return riders;
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

  async #send(transport: ChatTransport, item: OutboxItem, riders: readonly Rider[] = []): Promise<MessageRef | undefined> {
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
          // The card as it stands already holds every recorded change; the patches go on again
          // in recorded order, so the newest of each field is what shows.
          card = riders.reduce((c, r) => patchCard(c, r.view), patchCard(base, view));
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
