/**
 * The outbox window: the worker holds at most `window` pending items, reads the next page as
 * the ones before go out, reads each payload once per send, keeps each lane's order, retries a
 * failing item through core/backoff.ts without losing its place, gives up what expired as it
 * enters, and `stop()` during a page read sends nothing from that page.
 */
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { backoffDelay } from '../../../src/core/backoff.js';
import { DeliveryError, type Destination, type MessageRef } from '../../../src/core/chat/chat-types.js';
import type { CardView, DetailView } from '../../../src/core/chat/thread-view.js';
import type { LedgerEvent, OutboxEvent } from '../../../src/core/ledger-events.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { OutboxWindow } from '../../../src/core/outbox/outbox-window.js';
import { OutboxWorker } from '../../../src/core/outbox/outbox-worker.js';
import type { OutboxLedger, OutboxOptions } from '../../../src/core/outbox/outbox-types.js';
import type { DeliveryOptions } from '../../../src/ports/chat-transport.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { recordingLogger } from '../bot/bot-harness.js';
import { RecordingTransport } from '../bot/recording-transport.js';
import { at, open } from '../ledger/ledger-events-fixture.js';

const card = {
  kind: 'card',
  state: 'firing',
  headline: { answer: 'runbook', title: 'KubePodCrashLooping', entry: 'kubernetes/KubePodCrashLooping.md', confidence: 0.7 },
  verdict: 'inconclusive',
  mentions: [],
} as unknown as CardView;
const notice = { kind: 'notice', topic: 'status', icon: '👀', text: ['on it'] } as unknown as OutboxEvent['view'];

/** Thread `t`: its open, its card (post) and a reply; ids `p<t>` and `r<t>`. */
function thread(t: number, m = 1): LedgerEvent[] {
  const openId = `o${t}`;
  return [
    open(`f${t}`, 0, { id: openId }),
    { type: 'outbox', id: `p${t}`, transport: 'rec', op: 'post', openId, channel: '#c', view: card, at: at(m) },
    { type: 'outbox', id: `r${t}`, transport: 'rec', op: 'reply', openId, view: notice, at: at(m) },
  ];
}

/** A transport whose posts with a key in `failOnce` fail (retryable, outcome known) the first time. */
class FlakyTransport extends RecordingTransport {
  readonly failOnce = new Set<string>();
  /** How many items the worker held when each call arrived. */
  readonly heldAtCall: number[] = [];
  held: () => number = () => 0;
  override async post(to: Destination, view: CardView, detail: DetailView | undefined, o: DeliveryOptions): Promise<MessageRef> {
    this.heldAtCall.push(this.held());
    if (o.idempotencyKey !== undefined && this.failOnce.delete(o.idempotencyKey)) {
      this.calls.push({ op: 'post', key: o.idempotencyKey });
      throw new DeliveryError('chat API unavailable (post)', { retryable: true });
    }
    return super.post(to, view, detail, o);
  }
  override async reply(root: MessageRef, view: Parameters<RecordingTransport['reply']>[1], o: DeliveryOptions): Promise<MessageRef> {
    this.heldAtCall.push(this.held());
    return super.reply(root, view, o);
  }
}

/** A ledger holding `events`, read through counters: payload reads per seq, page reads, and a gate on page reads. */
async function setup(events: LedgerEvent[], options: Partial<OutboxOptions>, clockAt = at(2)) {
  const ledger = await Ledger.open(createStore('memory://', ''));
  await ledger.transaction(async (tx) => {
    for (const e of events) tx.record(e);
  });
  const r = ledger.read;
  const payloadReads = new Map<number, number>();
  const pages: Array<{ after: number; limit: number; got: number }> = [];
  const gate = { wait: Promise.resolve() as Promise<unknown>, reading: 0 };
  const read: OutboxLedger['read'] = {
    pendingOutbox: () => r.pendingOutbox(),
    isOutboxPending: (id) => r.isOutboxPending(id),
    pendingOutboxCount: () => r.pendingOutboxCount(),
    get seq() {
      return r.seq;
    },
    thread: (id) => r.thread(id),
    cardSeq: (openId, transport) => r.cardSeq(openId, transport),
    events: (from, to) => r.events(from, to),
    pendingOutboxPage: async (after, limit) => {
      gate.reading++;
      await gate.wait;
      gate.reading--;
      const page = r.pendingOutboxPage(after, limit);
      pages.push({ after, limit, got: page.length });
      return page;
    },
  };
  const counted: OutboxLedger = {
    read,
    eventAt: (seq) => (payloadReads.set(seq, (payloadReads.get(seq) ?? 0) + 1), ledger.eventAt(seq)),
    transaction: (fn) => ledger.transaction(fn),
  };
  const transport = new FlakyTransport();
  const clock = new ManualClock(clockAt);
  const worker = (): OutboxWorker =>
    new OutboxWorker({
      ledger: counted,
      transports: new Map([['rec', transport]]),
      clock,
      logger: recordingLogger([]),
      options: { concurrency: 2, ...options },
    });
  const w = worker();
  transport.held = () => w.status().window?.held ?? 0;
  return { ledger, w, worker, transport, clock, payloadReads, pages, gate };
}

const ids = (t: RecordingTransport): string[] => t.sent.map((s) => s.key ?? '');

describe('outbox window', () => {
  it('refuses a window that holds nothing', async () => {
    const ledger = await Ledger.open(createStore('memory://', ''));
    expect(() => new OutboxWindow(ledger.read, 0)).toThrow(/at least one item/);
    expect(() => new OutboxWindow(ledger.read, 1.5)).toThrow(RangeError);
  });

  it('holds at most its size, refills a page at a time as items go, and sends each item once, each payload read once', async () => {
    const { w, transport, payloadReads, pages, ledger } = await setup(Array.from({ length: 10 }, (_, t) => thread(t)).flat(), { window: 4 });
    w.start();
    await w.idle();
    await expect.poll(() => ledger.read.pendingOutboxCount()).toBe(0);
    await w.stop();
    expect(transport.sent).toHaveLength(20);
    expect(new Set(ids(transport)).size).toBe(20);
    // Never more than the window in memory; pages of at least half of it, after the last one read.
    expect(Math.max(...transport.heldAtCall)).toBeLessThanOrEqual(4);
    expect(pages.filter((p) => p.got > 0).every((p) => p.limit >= 2)).toBe(true);
    expect(pages.map((p) => p.after)).toEqual([...pages.map((p) => p.after)].sort((a, b) => a - b));
    expect(pages.length).toBeLessThan(20);
    // Each thread's card before its reply (order per lane), and each payload read exactly once.
    for (let t = 0; t < 10; t++) expect(ids(transport).indexOf(`p${t}`)).toBeLessThan(ids(transport).indexOf(`r${t}`));
    expect(payloadReads.size).toBe(20);
    expect([...payloadReads.values()].every((n) => n === 1)).toBe(true);
  });

  it('takes in what is recorded after the window found the end of the outbox', async () => {
    const { w, transport, ledger } = await setup(thread(0), { window: 4 });
    w.start();
    await w.idle();
    expect(ids(transport)).toEqual(['p0', 'r0']);
    await ledger.transaction(async (tx) => {
      for (const e of thread(1)) tx.record(e);
    });
    w.kick();
    await w.idle();
    await w.stop();
    expect(ids(transport)).toEqual(['p0', 'r0', 'p1', 'r1']);
  });

  it('retries a failing item through core/backoff.ts in its place: its reply waits, the threads behind it go on', async () => {
    const { w, transport, clock, ledger } = await setup([...thread(0), ...thread(1), ...thread(2)], { window: 4, baseDelayMs: 1000, maxDelayMs: 8000 });
    transport.failOnce.add('p0');
    w.start();
    await w.idle();
    // p0 failed and waits for its retry; thread 1 went, and thread 2 came in with the next page.
    expect(transport.calls[0]?.key).toBe('p0');
    await expect.poll(() => ids(transport).sort()).toEqual(['p1', 'p2', 'r1', 'r2']);
    const exact = backoffDelay({ baseMs: 1000, maxMs: 8000 }, 1);
    clock.advance(Math.floor(exact * 0.8) - 1);
    w.kick();
    await w.idle();
    expect(ids(transport)).not.toContain('p0');
    clock.advance(Math.ceil(exact * 0.4) + 2);
    w.kick();
    await w.idle();
    await expect.poll(() => ledger.read.pendingOutboxCount()).toBe(0);
    await w.stop();
    expect(transport.calls.filter((c) => c.key === 'p0')).toHaveLength(2);
    expect(ids(transport).slice(-2)).toEqual(['p0', 'r0']);
  });

  it('gives up what expired as it enters the window, page after page, sending none of it', async () => {
    const { w, transport, clock, ledger } = await setup(Array.from({ length: 5 }, (_, t) => thread(t)).flat(), { window: 2, maxAgeMs: 60 * 60_000 });
    clock.advance(2 * 60 * 60_000);
    w.start();
    await w.idle();
    await expect.poll(() => ledger.read.pendingOutboxCount()).toBe(0);
    await w.stop();
    expect(transport.calls).toEqual([]);
    const failed: string[] = [];
    for await (const rec of ledger.read.events(0)) if ('event' in rec && rec.event.type === 'outbox_failed') failed.push(rec.event.id);
    expect(failed.sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'r0', 'r1', 'r2', 'r3', 'r4']);
  });

  it('sends nothing from a page read when stop() came during the read; the next worker sends it all once', async () => {
    const { w, worker, transport, gate, ledger } = await setup([...thread(0), ...thread(1)], { window: 4 });
    let release!: () => void;
    gate.wait = new Promise<void>((resolve) => (release = resolve));
    w.start();
    await expect.poll(() => gate.reading).toBe(1);
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(stopped).toBe(false); // stop waits for the read it interrupted
    release();
    await stopping;
    expect(transport.calls).toEqual([]);
    expect(ledger.read.pendingOutboxCount()).toBe(4);

    const next = worker();
    next.start();
    await next.idle();
    await expect.poll(() => ledger.read.pendingOutboxCount()).toBe(0);
    await next.stop();
    expect(ids(transport).sort()).toEqual(['p0', 'p1', 'r0', 'r1']);
  });
});
