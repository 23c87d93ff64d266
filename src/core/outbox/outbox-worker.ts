/**
 * The durable outbox (SPEC §9 "Delivery never holds up intake"). What the bot must say is
 * recorded in the ledger with what it is about (an `outbox` event in the same transaction as
 * the open or resolve); this worker delivers it afterwards, records `delivered` (or
 * `outbox_failed`), and retries with backoff — honouring a surface's `Retry-After` /
 * `retry_after_ms` — across restarts, since pending items are part of the replayed read model.
 *
 * The worker runs passes and records results; what a pass may send is the delivery lanes'
 * (delivery-lanes.ts: ordering, attempts, expiry, orphans), whether a send may repeat one is
 * exactly-once's (exactly-once.ts: suspects, lookup, watch, sweep), and what a card edit sends
 * is card-edits.ts's (riders, the card as it stands). The worker holds only a window of what
 * is pending (outbox-window.ts), read a page at a time as it sends. Sends go only while `mayDeliver` says so
 * (a replica holding its lease with margin). Lanes run concurrently: a slow thread holds up no
 * other.
 */
import type { ChatTransport } from '../../ports/chat-transport.js';
import type { Clock, Timer } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { DeliveryEnd, LoopObserver } from '../../ports/loop-observer.js';
import type { Transcript } from '../../ports/transcript.js';
import type { PeopleNames } from '../people.js';
import { DeliveryError, type MessageRef } from '../chat/chat-types.js';
import type { LedgerEvent } from '../ledger-events.js';
import { readPayload, ridersOf } from './card-edits.js';
import { Attempts, planLanes } from './delivery-lanes.js';
import { ExactlyOnce, type Lookups, type RecordedSend } from './exactly-once.js';
import { DEFAULT_OUTBOX_OPTIONS, type OutboxItem, type OutboxLedger, type OutboxOptions } from './outbox-types.js';
import { OutboxWindow } from './outbox-window.js';
import { sendItem } from './send-item.js';

/** How soon a worker that may not send looks again. */
const NOT_NOW_MS = 1000;

/** One delivery's result waiting to be recorded; its lane stays busy until then. */
interface Result {
  events: LedgerEvent[];
  lane: string;
  item: OutboxItem;
  /** The post or reply sent (or adopted): exactly-once is told once it is recorded, and watches it if its record fails. */
  sent?: Omit<RecordedSend, 'item'>;
}

export class OutboxWorker {
  readonly #ledger: OutboxLedger;
  readonly #transports: ReadonlyMap<string, ChatTransport>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: OutboxOptions;
  readonly #observer: Pick<LoopObserver, 'deliveryEnded' | 'duplicateRemoved'> | undefined;
  readonly #attempts: Attempts;
  readonly #once: ExactlyOnce;
  readonly #mayDeliver: () => boolean;
  readonly #people: PeopleNames | undefined;
  readonly #transcript: Transcript | undefined;
  /** The pending items held in memory: a prefix of the outbox, read a page at a time. */
  readonly #window: OutboxWindow;
  /** A page's lookups, by the outbox ids of its suspects: one lookup per place per page, not per send. */
  readonly #pageLookups = new Map<string, Lookups>();
  /** Items recorded up to this seq when the worker started may have been sent by an earlier process. */
  #suspectUpTo = 0;
  /** Lanes with a delivery in flight (sent, or waiting for its record). */
  readonly #running = new Set<string>();
  #timer: Timer | undefined;
  #stopped = true;
  #pass: Promise<void> = Promise.resolve();
  #again = false;
  #scheduled = false;
  /** Waiting for nothing deliverable right now (`idle`). */
  #idle: Array<() => void> = [];
  /** Waiting for no lane in flight (`stop`). */
  #landed: Array<() => void> = [];
  /** Delivery results waiting to be recorded together; their lanes stay busy until then. */
  #results: Result[] = [];
  #flushing: Promise<void> | undefined;

  constructor(deps: {
    ledger: OutboxLedger;
    transports: ReadonlyMap<string, ChatTransport>;
    clock: Clock;
    logger: Logger;
    options?: Partial<OutboxOptions>;
    observer?: Pick<LoopObserver, 'deliveryEnded' | 'duplicateRemoved'>;
    /** Checked before each send (a replica: the lease is held with margin). Default: always. */
    mayDeliver?: () => boolean;
    /** Display names for people the views name, filled in before each send (never waited for). */
    people?: PeopleNames;
    /** Every message a surface took (`REPRISE_TRANSCRIPT`). */
    transcript?: Transcript;
  }) {
    this.#mayDeliver = deps.mayDeliver ?? (() => true);
    this.#people = deps.people;
    this.#transcript = deps.transcript;
    this.#ledger = deps.ledger;
    this.#transports = deps.transports;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = { ...DEFAULT_OUTBOX_OPTIONS, ...deps.options };
    this.#observer = deps.observer;
    this.#attempts = new Attempts(this.#opts);
    this.#once = new ExactlyOnce({ ...deps, options: this.#opts, observer: deps.observer });
    this.#window = new OutboxWindow(deps.ledger.read, this.#opts.window);
  }

  /**
   * Starts delivering. What is pending now may have been sent by an earlier process (or the
   * leader before this one) that died before recording it: each post or reply recorded up to
   * now is looked up before it is sent (marked as it enters the window).
   */
  start(): void {
    this.#stopped = false;
    this.#suspectUpTo = this.#ledger.read.seq;
    this.#window.reset();
    this.#pageLookups.clear();
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
    if (this.#running.size > 0) await new Promise<void>((resolve) => this.#landed.push(resolve));
    await this.#flushing;
  }

  /** Undelivered items, how their retries stand, and how many of them the window holds (status, readiness detail, metrics). */
  status(): { pending: number; retrying: number; oldestAt?: string; window?: { size: number; held: number } } {
    const pending = this.#ledger.read.pendingOutboxCount();
    if (pending === 0) return { pending: 0, retrying: 0 };
    let oldestAt: string | undefined;
    for (const i of this.#ledger.read.pendingOutbox()) {
      oldestAt = i.at;
      break;
    }
    return { pending, retrying: this.#attempts.retrying(), ...(oldestAt ? { oldestAt } : {}), window: { size: this.#window.size, held: this.#window.held } };
  }

  /** Resolves once no duplicate watch or sweep is running (tests, shutdown). */
  settled(): Promise<void> {
    return this.#once.settled();
  }

  /**
   * Ends the duplicate watches and sweeps (the process is shutting down; the leader's sweep
   * covers what a watch left). `stop` leaves them running: losing the lead is when they matter.
   */
  dispose(): Promise<void> {
    return this.#once.dispose();
  }

  async #run(): Promise<void> {
    if (this.#stopped || !this.#again) return;
    this.#again = false;
    if (!this.#mayDeliver()) {
      // Not ours to send now (the lease is late or lost): look again soon, send nothing.
      this.#clock.clearTimeout(this.#timer);
      this.#timer = this.#clock.setTimeout(() => this.kick(), NOT_NOW_MS).unref();
      if (this.#running.size === 0) for (const resolve of this.#idle.splice(0)) resolve();
      return;
    }
    for (const gone of this.#window.prune()) this.#pageLookups.delete(gone.id);
    if (this.#window.low()) {
      const entered = await this.#window.refill();
      // Stopped while the page was read: nothing from it goes.
      if (this.#stopped) return;
      const page: Lookups = new Map();
      for (const item of entered) {
        if ((item.op === 'post' || item.op === 'reply') && item.seq !== undefined && item.seq <= this.#suspectUpTo) {
          this.#once.suspect(item.id);
          this.#pageLookups.set(item.id, page);
        }
      }
    }
    // After the page is read: what was recorded meanwhile (its lane freed) must not go again.
    for (const gone of this.#window.prune()) this.#pageLookups.delete(gone.id);
    const now = this.#clock.now().getTime();
    const plan = planLanes({
      pending: this.#window.items(),
      read: this.#ledger.read,
      running: this.#running,
      attempts: this.#attempts,
      opts: this.#opts,
      now,
      room: this.#opts.concurrency - this.#running.size,
    });
    let nextWake = plan.nextWake;
    const lookups: Lookups = new Map();
    for (const { item, lane } of plan.ready) {
      if (this.#running.size >= this.#opts.concurrency) {
        nextWake = Math.min(nextWake, now + 50);
        break;
      }
      this.#running.add(lane);
      void this.#deliver(item, lane, lookups);
    }
    if (plan.given.length > 0) {
      for (const g of plan.given) if (g.type === 'outbox_failed') this.#log.warn({ outboxId: g.id, reason: g.reason }, 'outbox item given up');
      const recorded = await this.#record(plan.given).then(
        () => true,
        (err: unknown) => (this.#log.error({ err }, 'recording given-up outbox items failed; they stay pending'), false),
      );
      if (recorded) {
        for (const g of plan.given) if (g.type === 'outbox_failed') this.#attempts.clear(g.id);
        for (const g of plan.gaveUp) this.#observer?.deliveryEnded(g);
      }
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

  /** The lane is free again: look at the outbox for what comes next. */
  #release(lane: string): void {
    this.#running.delete(lane);
    if (this.#running.size === 0) for (const resolve of this.#landed.splice(0)) resolve();
    this.kick();
  }

  async #deliver(item: OutboxItem, lane: string, lookups: Lookups): Promise<void> {
    const transport = this.#transports.get(item.transport);
    let events: LedgerEvent[];
    let ended: DeliveryEnd;
    const wasSuspect = this.#once.isSuspect(item.id);
    let extras: readonly MessageRef[] = [];
    try {
      if (!transport) throw new DeliveryError(`transport ${item.transport} is not configured in this process`, { retryable: false });
      // A page's lookup serves the item's first attempt only; any later one looks again.
      const page = this.#pageLookups.get(item.id);
      this.#pageLookups.delete(item.id);
      const lookedUp = wasSuspect ? await this.#once.lookUp(transport, item, page ?? lookups, this.#window.items()) : undefined;
      const found = lookedUp?.[0];
      extras = lookedUp?.slice(1) ?? [];
      if (found === undefined && !this.#mayDeliver()) {
        // The lease went late while this item waited: not sent, not an attempt.
        this.#release(lane);
        return;
      }
      let ref = found;
      let riders: Awaited<ReturnType<typeof ridersOf>> = [];
      if (!found) {
        // Read once per send: the message, and the card edits queued behind it that ride along.
        const payload = await readPayload(this.#ledger, item);
        riders = await ridersOf(this.#ledger, item, payload, this.#window.items());
        ref = await sendItem(this.#ledger, transport, item, payload, riders, { people: this.#people, transcript: this.#transcript });
        if (ref && !this.#mayDeliver()) {
          // Answered after the lease went late or was lost: the bytes left before the process
          // knew. Not recorded (a fenced write); the ledger says later which message the item is.
          this.#once.suspect(item.id);
          this.#once.watch(item, ref);
          this.#release(lane);
          return;
        }
      } else {
        this.#log.info(
          { outboxId: item.id, transport: item.transport, op: item.op, messageRef: found.id },
          'found the message already sent; adopted it, not sent again',
        );
      }
      this.#once.clear(item.id);
      this.#attempts.clear(item.id);
      ended = { transport: item.transport, op: item.op, outcome: 'delivered' };
      events = this.#deliveredEvents(item, ref, riders);
    } catch (err) {
      const retryable = !(err instanceof DeliveryError) || err.retryable;
      const message = err instanceof Error ? err.message : String(err);
      // The surface may have acted on it: the next attempt looks for it first.
      if (!(err instanceof DeliveryError) || err.outcomeUnknown) {
        this.#once.suspect(item.id);
        // ... and if the lead went meanwhile, the next leader may send it too: watch for that.
        if (!this.#mayDeliver()) this.#once.watch(item, undefined);
      }
      if (!retryable) {
        this.#log.error({ err, outboxId: item.id, transport: item.transport, op: item.op }, 'delivery refused for good; giving up');
        events = [{ type: 'outbox_failed', id: item.id, reason: message.slice(0, 500), at: this.#clock.now().toISOString() }];
        this.#attempts.clear(item.id);
        ended = { transport: item.transport, op: item.op, outcome: 'failed', reason: 'refused' };
      } else {
        const retryAfterMs = err instanceof DeliveryError ? err.retryAfterMs : undefined;
        const { n, waitMs } = this.#attempts.failed(item.id, this.#clock.now().getTime(), message, retryAfterMs);
        this.#log.warn(
          { outboxId: item.id, transport: item.transport, op: item.op, attempt: n, retryInMs: Math.round(waitMs), err: message },
          'delivery failed; will retry',
        );
        events = [];
        ended = { transport: item.transport, op: item.op, outcome: 'retry' };
      }
    }
    this.#observer?.deliveryEnded(ended);
    if (events.length === 0) {
      this.#release(lane);
      return;
    }
    // The lane stays busy until its result is recorded: a pass must not send the item again.
    const d = events[0];
    const sent = d?.type === 'delivered' && d.channel !== undefined ? { transport: item.transport, channel: d.channel, id: d.messageRef } : undefined;
    this.#results.push({
      events,
      lane,
      item,
      ...(sent ? { sent: { sent, ...(extras.length > 0 ? { extras } : {}), ...(wasSuspect ? { sweep: true } : {}) } } : {}),
    });
    void this.#flush();
  }

  /** What the ledger records for a delivery: the message it became (a post or reply), or that it (and its riders) went. */
  #deliveredEvents(item: OutboxItem, ref: MessageRef | undefined, riders: readonly { item: OutboxItem }[]): LedgerEvent[] {
    const at = this.#clock.now().toISOString();
    // A private answer belongs to no thread: it is done, and registers no message.
    if (item.openId === undefined) return [{ type: 'delivered', transport: item.transport, messageRef: item.id, outboxId: item.id, root: false, at }];
    const fingerprint = this.#ledger.read.thread(item.openId)?.fingerprint ?? 'unknown';
    if (ref) {
      return [
        {
          type: 'delivered',
          openId: item.openId,
          fingerprint,
          transport: item.transport,
          messageRef: ref.id,
          channel: ref.channel,
          outboxId: item.id,
          root: item.op === 'post',
          at,
        },
      ];
    }
    return [item, ...riders.map((r) => r.item)].map((i) => ({
      type: 'delivered' as const,
      openId: i.openId,
      fingerprint,
      transport: i.transport,
      messageRef: `${i.id}`,
      outboxId: i.id,
      root: false,
      at,
    }));
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
          for (const b of batch) for (const e of b.events) if (e.type === 'delivered' && e.outboxId !== undefined) this.#once.suspect(e.outboxId);
          // A write refused because the lead went (a fence): the next leader may send the item too.
          for (const b of batch) if (b.sent && !this.#mayDeliver()) this.#once.watch(b.item, b.sent.sent);
        }
        if (recorded) for (const b of batch) if (b.sent) this.#once.recorded({ item: b.item, ...b.sent });
        for (const b of batch) this.#running.delete(b.lane);
        if (this.#running.size === 0) for (const resolve of this.#landed.splice(0)) resolve();
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
}
