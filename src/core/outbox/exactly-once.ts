/**
 * Exactly once where a send is not idempotent (a Slack post). Every send carries its item's id,
 * and an item whose last attempt has no known outcome (a timeout, a reset, a crash or a
 * failover between the send and its record, a record that failed) is a suspect: it is first
 * looked up on the surface (`ChatTransport.find`) and the message found adopted instead of sent
 * again.
 *
 * What no check before a send can stop — a process paused after its last check with the
 * request still in its HTTP client sends it when it wakes, after the next leader looked the item
 * up (not found) and posted it — is taken back afterwards, never by losing the card:
 * - a send answered when `mayDeliver` no longer holds is not recorded (the write would be
 *   fenced); the process watches the shared ledger for the item for `duplicateWatchMs` and
 *   deletes its own message once the ledger records another one (the leader adopts it otherwise);
 * - a lookup that finds an item more than once adopts the oldest and deletes the others;
 * - an item delivered while it was suspect is looked up again `duplicateSweepMs` after its
 *   record (the sweep), and what carries its id besides the recorded message is deleted.
 */
import type { ChatTransport } from '../../ports/chat-transport.js';
import type { Clock, Timer } from '../../ports/clock.js';
import type { Logger } from '../../ports/logger.js';
import type { LoopObserver } from '../../ports/loop-observer.js';
import { DeliveryError, type MessageRef } from '../chat/chat-types.js';
import { placeOf, type OutboxItem, type OutboxLedger, type OutboxOptions, type Place } from './outbox-types.js';

/** How often a duplicate watch reads the ledger again. */
const WATCH_EVERY_MS = 1000;
/** A sweep also takes what comes due this soon after it. */
const SWEEP_ALONG_MS = 1000;

/** The lookups of one pass: one per channel or thread, shared by the pass's items. */
export type Lookups = Map<string, Promise<ReadonlyMap<string, readonly MessageRef[]>>>;

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

/** A delivery that was recorded, as exactly-once needs it. */
export interface RecordedSend {
  item: OutboxItem;
  /** The message sent or adopted (a post or reply). */
  sent: MessageRef;
  /** Other messages carrying the item's id (a lookup found it more than once): deleted now. */
  extras?: readonly MessageRef[];
  /** The item was suspect when it went: its place is swept for late duplicates. */
  sweep?: boolean;
}

export class ExactlyOnce {
  readonly #ledger: Pick<OutboxLedger, 'read'>;
  readonly #transports: ReadonlyMap<string, ChatTransport>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #opts: Pick<OutboxOptions, 'concurrency' | 'duplicateWatchMs' | 'duplicateSweepMs'>;
  readonly #observer: Pick<LoopObserver, 'duplicateRemoved'> | undefined;
  /** Items that may have been sent already (an attempt of unknown outcome, or pending when this worker started): looked up before a send. */
  readonly #suspect = new Set<string>();
  /** Fenced sends, by outbox id; they outlive the worker's `stop` (a replica that lost the lead takes back its own duplicates). */
  readonly #watches = new Map<string, Watch>();
  /** The log is read for watches from after this seq. */
  #watchedTo = 0;
  #watchTimer: Timer | undefined;
  #watching: Promise<void> | undefined;
  #sweeps: Sweep[] = [];
  #sweepTimer: Timer | undefined;
  /** When the armed sweep timer fires (ms). */
  #sweepAt = 0;
  #sweeping: Promise<void> | undefined;

  constructor(deps: {
    ledger: Pick<OutboxLedger, 'read'>;
    transports: ReadonlyMap<string, ChatTransport>;
    clock: Clock;
    logger: Logger;
    options: Pick<OutboxOptions, 'concurrency' | 'duplicateWatchMs' | 'duplicateSweepMs'>;
    observer?: Pick<LoopObserver, 'duplicateRemoved'> | undefined;
  }) {
    this.#ledger = deps.ledger;
    this.#transports = deps.transports;
    this.#clock = deps.clock;
    this.#log = deps.logger;
    this.#opts = deps.options;
    this.#observer = deps.observer;
  }

  /** The item may have been sent already: look it up before sending it. */
  suspect(id: string): void {
    this.#suspect.add(id);
  }

  isSuspect(id: string): boolean {
    return this.#suspect.has(id);
  }

  /** Its outcome is known (delivered or given up). */
  clear(id: string): void {
    this.#suspect.delete(id);
  }

  /**
   * The message a suspect item became, if the surface has it: one lookup per channel or thread
   * per `lookups` (a page of the window, or a pass: shared by its items), reading back from the
   * oldest suspect of the place among the `near` items (the window). A surface without `find` sends idempotently by itself (Matrix transaction ids).
   * Every message found is returned, the oldest first.
   */
  async lookUp(transport: ChatTransport, item: OutboxItem, lookups: Lookups, near: Iterable<OutboxItem>): Promise<readonly MessageRef[] | undefined> {
    if (!transport.find || (item.op !== 'post' && item.op !== 'reply')) return undefined;
    const where = placeOf(this.#ledger.read, item);
    const key = `${item.transport}|${where.channel}|${where.thread ?? ''}`;
    let found = lookups.get(key);
    if (!found) {
      let since = Date.parse(item.at);
      for (const other of near) {
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

  /** A delivery is recorded: the duplicates a lookup found go, and an item that was suspect is swept later. */
  recorded(r: RecordedSend): void {
    const { item, sent } = r;
    for (const extra of r.extras ?? []) void this.#removeDuplicate(item.transport, extra, item.id, 'found with the message adopted');
    if (!r.sweep || this.#opts.duplicateSweepMs.length === 0) return;
    const now = this.#clock.now().getTime();
    const where = item.op === 'reply' ? placeOf(this.#ledger.read, item) : { channel: sent.channel };
    const sweep: Sweep = {
      id: item.id,
      transport: item.transport,
      where,
      since: Date.parse(item.at),
      keep: sent.id,
      due: this.#opts.duplicateSweepMs.map((ms) => now + ms).sort((x, y) => x - y),
    };
    this.#sweeps.push(sweep);
    this.#armSweep(sweep);
  }

  /**
   * Arms the sweep timer for the earliest due sweep. A delivery adds a sweep due later than any
   * already waiting (its delays count from now), so while a timer is armed no earlier than the
   * new one's due it stands: a drain that records 20,000 suspect deliveries arms it once, not
   * 20,000 times over an ever longer list (that was quadratic, and its spread argument list
   * overflows the stack past ~100k sweeps).
   */
  #armSweep(added?: Sweep): void {
    if (added && this.#sweepTimer !== undefined && this.#sweepAt <= added.due[0]!) return;
    this.#clock.clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    if (this.#sweeps.length === 0) return;
    let next = Number.POSITIVE_INFINITY;
    for (const s of this.#sweeps) if (s.due[0]! < next) next = s.due[0]!;
    this.#sweepAt = next;
    this.#sweepTimer = this.#clock
      .setTimeout(
        () => {
          this.#sweepTimer = undefined;
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
      const group = places.get(key);
      if (group) group.push(s);
      else places.set(key, [s]);
    }
    const sweepPlace = async (group: Sweep[]): Promise<void> => {
      const { transport: name, where } = group[0]!;
      const transport = this.#transports.get(name);
      if (!transport?.find || !transport.remove) return;
      let found: ReadonlyMap<string, readonly MessageRef[]>;
      try {
        found = await transport.find(where, new Date(group.reduce((min, s) => Math.min(min, s.since), Number.POSITIVE_INFINITY)));
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
  watch(item: OutboxItem, own: MessageRef | undefined): void {
    if (this.#opts.duplicateWatchMs <= 0 || item.seq === undefined || (item.op !== 'post' && item.op !== 'reply')) return;
    const transport = this.#transports.get(item.transport);
    if (!transport?.remove || (!own && !transport.find)) return;
    const prev = this.#watches.get(item.id);
    const until = this.#clock.now().getTime() + this.#opts.duplicateWatchMs;
    this.#watches.set(item.id, {
      item,
      own: own ?? prev?.own,
      where: own?.thread ? { channel: own.channel, thread: own.thread } : placeOf(this.#ledger.read, item),
      until,
    });
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

  /** Resolves once no duplicate watch or sweep is running (tests, shutdown). */
  async settled(): Promise<void> {
    await this.#watching;
    await this.#sweeping;
  }

  /** Ends the duplicate watches and sweeps (the process is shutting down; the leader's sweep covers what a watch left). */
  async dispose(): Promise<void> {
    this.#clock.clearTimeout(this.#watchTimer);
    this.#clock.clearTimeout(this.#sweepTimer);
    this.#watchTimer = this.#sweepTimer = undefined;
    this.#watches.clear();
    this.#sweeps = [];
    await this.settled();
  }
}
