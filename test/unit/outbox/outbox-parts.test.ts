/**
 * The outbox's parts on their own: the lanes decide what a pass sends (head of each lane,
 * first messages first, backoff through core/backoff.ts, expiry, orphans), card edits fold the
 * queued changes into one edit with each payload read once, and `stop` waits for the send in
 * flight.
 */
import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { backoffDelay } from '../../../src/core/backoff.js';
import type { ChatTransport } from '../../../src/ports/chat-transport.js';
import type { CardPatch, CardView } from '../../../src/core/chat/thread-view.js';
import type { LedgerEvent, OutboxEvent } from '../../../src/core/ledger-events.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import { Attempts, planLanes } from '../../../src/core/outbox/delivery-lanes.js';
import { ExactlyOnce } from '../../../src/core/outbox/exactly-once.js';
import { OutboxWorker } from '../../../src/core/outbox/outbox-worker.js';
import type { OutboxItem, OutboxLedger } from '../../../src/core/outbox/outbox-types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { SentMessage } from '../../../src/ports/transcript.js';
import { recordingLogger } from '../bot/bot-harness.js';
import { RecordingTransport } from '../bot/recording-transport.js';
import { at, open } from '../ledger/ledger-events-fixture.js';

const item = (o: Partial<OutboxItem> & Pick<OutboxItem, 'id' | 'op'>): OutboxItem =>
  ({ transport: 'rec', openId: 'o1', at: at(0), seq: 1, ...(o.op === 'post' ? { channel: '#c' } : {}), ...o }) as OutboxItem;
const noThreads = { thread: () => undefined };
const rooted = { thread: () => ({ roots: { rec: { channel: '#c', id: 't-1' } } }) } as unknown as Parameters<typeof planLanes>[0]['read'];
const opts = { maxAgeMs: 60 * 60_000, answerMaxAgeMs: 10 * 60_000 };

describe('delivery lanes', () => {
  it('sends only the head of each lane, and no lane already in flight', () => {
    const pending = [
      item({ id: 'a1', op: 'post' }),
      item({ id: 'a2', op: 'reply' }),
      item({ id: 'b1', op: 'post', openId: 'o2' }),
      item({ id: 'c1', op: 'post', openId: 'o3' }),
    ];
    const plan = planLanes({
      pending,
      read: noThreads,
      running: new Set(['rec|o3']),
      attempts: new Attempts({ baseDelayMs: 1000, maxDelayMs: 8000 }),
      opts,
      now: Date.parse(at(1)),
      room: 8,
    });
    expect(plan.ready.map((r) => r.item.id)).toEqual(['a1', 'b1']);
    expect(plan.given).toEqual([]);
  });

  it("puts every thread's first message before other threads' later ones, otherwise in recorded order", () => {
    const pending = [
      item({ id: 'r1', op: 'reply', openId: 'o1' }),
      item({ id: 'p2', op: 'post', openId: 'o2' }),
      item({ id: 'u3', op: 'update', openId: 'o3' }),
      item({ id: 'p4', op: 'post', openId: 'o4' }),
    ];
    const plan = planLanes({
      pending,
      read: rooted,
      running: new Set(),
      attempts: new Attempts({ baseDelayMs: 1000, maxDelayMs: 8000 }),
      opts,
      now: Date.parse(at(1)),
      room: 8,
    });
    expect(plan.ready.map((r) => r.item.id)).toEqual(['p2', 'p4', 'r1', 'u3']);
  });

  it('skips what a transaction has not committed yet', () => {
    const plan = planLanes({
      pending: [item({ id: 'x', op: 'post', seq: undefined })],
      read: noThreads,
      running: new Set(),
      attempts: new Attempts({ baseDelayMs: 1, maxDelayMs: 1 }),
      opts,
      now: 0,
      room: 1,
    });
    expect(plan.ready).toEqual([]);
  });

  it('gives up an expired head (with its last error) and an orphaned reply, and says why', () => {
    const attempts = new Attempts({ baseDelayMs: 1000, maxDelayMs: 8000 });
    attempts.failed('old', Date.parse(at(0)), 'chat API unavailable');
    const pending = [
      item({ id: 'old', op: 'post', at: at(0) }),
      item({ id: 'orphan', op: 'reply', openId: 'o9', at: at(70) }),
      item({ id: 'late', op: 'answer', openId: undefined, at: at(50) }),
    ];
    const plan = planLanes({ pending, read: noThreads, running: new Set(), attempts, opts, now: Date.parse(at(75)), room: 8 });
    expect(plan.ready).toEqual([]);
    expect(plan.given).toEqual([
      expect.objectContaining({ type: 'outbox_failed', id: 'old', reason: 'undelivered after 75 min: chat API unavailable' }),
      expect.objectContaining({ type: 'outbox_failed', id: 'orphan', reason: 'its thread was never delivered on rec' }),
      expect.objectContaining({ type: 'outbox_failed', id: 'late', reason: 'undelivered after 25 min' }),
    ]);
    expect(plan.gaveUp.map((g) => ('reason' in g ? g.reason : g.outcome))).toEqual(['expired', 'orphaned', 'expired']);
  });

  it('holds a failed head until its backoff has passed, and wakes then', () => {
    const attempts = new Attempts({ baseDelayMs: 1000, maxDelayMs: 8000 });
    const now = Date.parse(at(1));
    const { waitMs } = attempts.failed('a1', now, 'boom');
    const args = { pending: [item({ id: 'a1', op: 'post' })], read: noThreads, running: new Set<string>(), attempts, opts, room: 8 };
    const held = planLanes({ ...args, now: now + waitMs - 1 });
    expect(held.ready).toEqual([]);
    expect(held.nextWake).toBe(now + waitMs);
    expect(planLanes({ ...args, now: now + waitMs }).ready).toHaveLength(1);
  });
});

describe('attempts', () => {
  it('back off through core/backoff.ts: doubling, capped, spread ±20%; a surface that names a wait wins', () => {
    const attempts = new Attempts({ baseDelayMs: 1000, maxDelayMs: 8000 });
    const waits = Array.from({ length: 6 }, () => attempts.failed('x', 0, 'e').waitMs);
    const policy = { baseMs: 1000, maxMs: 8000 };
    waits.forEach((w, i) => {
      const exact = backoffDelay(policy, i + 1);
      expect(w).toBeGreaterThanOrEqual(Math.floor(exact * 0.8));
      expect(w).toBeLessThanOrEqual(Math.ceil(exact * 1.2));
    });
    expect(attempts.failed('x', 0, 'e', 30_000)).toEqual({ n: 7, waitMs: 30_000 });
    expect(attempts.failed('y', 0, 'e', -5).waitMs).toBe(0);
    expect(attempts.retrying()).toBe(2);
    attempts.clear('x');
    expect(attempts.nextAt('x')).toBeUndefined();
    expect(attempts.failed('x', 0, 'e').n).toBe(1);
  });
});

const card = {
  kind: 'card',
  state: 'firing',
  headline: { answer: 'runbook', title: 'KubePodCrashLooping', entry: 'kubernetes/KubePodCrashLooping.md', confidence: 0.7 },
  verdict: 'inconclusive',
  mentions: [],
} as unknown as CardView;
let n = 0;
const outbox = (op: 'post' | 'update', view: CardView | CardPatch): OutboxEvent => ({
  type: 'outbox',
  id: `ob-${++n}`,
  transport: 'rec',
  op,
  openId: 'o1',
  ...(op === 'post' ? { channel: '#c' } : {}),
  view,
  at: at(1),
});

async function worker(events: LedgerEvent[], transport = new RecordingTransport()) {
  const ledger = await Ledger.open(createStore('memory://', ''));
  await ledger.transaction(async (tx) => {
    for (const e of events) tx.record(e);
  });
  const reads = new Map<number, number>();
  const counted: OutboxLedger = {
    read: ledger.read,
    eventAt: (seq) => (reads.set(seq, (reads.get(seq) ?? 0) + 1), ledger.eventAt(seq)),
    transaction: (fn) => ledger.transaction(fn),
  };
  const clock = new ManualClock(at(2));
  const w = new OutboxWorker({ ledger: counted, transports: new Map([['rec', transport]]), clock, logger: recordingLogger([]) });
  return { ledger, reads, w, transport };
}

describe('card edits', () => {
  it('fold a burst of queued changes into one edit of the card as it stands, reading each payload once', async () => {
    const { ledger, reads, w, transport } = await worker([open('f1', 0, { id: 'o1' }), outbox('post', card)]);
    w.start();
    await w.idle();
    expect(transport.posts).toHaveLength(1);
    reads.clear();
    await ledger.transaction(async (tx) => {
      tx.record(outbox('update', { kind: 'card_patch', verdict: 'action_required' }));
      tx.record(outbox('update', { kind: 'card_patch', stateNote: 'first' }));
      tx.record(outbox('update', { kind: 'card_patch', stateNote: 'second', state: 'resolved' }));
    });
    w.kick();
    await w.idle();
    expect(transport.updates).toHaveLength(1);
    expect(transport.updates[0]!.view).toMatchObject({ kind: 'card', verdict: 'action_required', stateNote: 'second', state: 'resolved' });
    // Each update's payload once, and the posted card once (the card as it stands).
    expect([...reads.values()].every((c) => c === 1)).toBe(true);
    expect(reads.size).toBe(4);
    expect(w.status()).toEqual({ pending: 0, retrying: 0 });
    await w.stop();
  });

  it('gives up an edit whose posted card cannot be read, without sending it', async () => {
    const { ledger, w, transport } = await worker([open('f1', 0, { id: 'o1' }), outbox('post', card)]);
    w.start();
    await w.idle();
    await ledger.transaction(async (tx) => {
      tx.record(outbox('update', { kind: 'card_patch', stateNote: 'x' }));
    });
    // The posted card's event cannot be read (a damaged log): there is nothing to patch.
    const cardSeq = ledger.read.cardSeq('o1', 'rec')!;
    const broken: OutboxLedger = {
      read: ledger.read,
      eventAt: async (seq) => (seq === cardSeq ? undefined : ledger.eventAt(seq)),
      transaction: (fn) => ledger.transaction(fn),
    };
    const w2 = new OutboxWorker({ ledger: broken, transports: new Map([['rec', transport]]), clock: new ManualClock(at(2)), logger: recordingLogger([]) });
    await w.stop();
    w2.start();
    await w2.idle();
    expect(transport.updates).toHaveLength(0);
    expect(w2.status().pending).toBe(0);
    await w2.stop();
  });
});

describe('stop', () => {
  it('waits for the send in flight to be recorded, then resolves', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { ledger, w, transport } = await worker([open('f1', 0, { id: 'o1' }), outbox('post', card)], new RecordingTransport({ slowPost: { nth: 1, gate } }));
    w.start();
    await expect.poll(() => transport.calls.length).toBe(1);
    let stopped = false;
    const stopping = w.stop().then(() => (stopped = true));
    await new Promise((r) => setTimeout(r, 30));
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(transport.posts).toHaveLength(1);
    expect(ledger.read.pendingOutboxCount()).toBe(0);
  });
});

describe('what a surface took', () => {
  it('is recorded in the transcript for every surface and op, people named as the directory knows them at send time', async () => {
    const ledger = await Ledger.open(createStore('memory://', ''));
    const ev = (id: string, op: 'post' | 'update' | 'reply', view: OutboxEvent['view']): OutboxEvent => ({
      type: 'outbox',
      id,
      transport: 'matrix',
      op,
      openId: 'o1',
      ...(op === 'post' ? { channel: '!room:hs' } : {}),
      view,
      at: at(1),
    });
    const ann = { person: { via: 'matrix', id: '@ann:hs' } };
    await ledger.transaction(async (tx) => {
      tx.record(open('f1', 0, { id: 'o1' }));
      tx.record(ev('m-1', 'post', card));
    });
    const transport = new RecordingTransport({ name: 'matrix' });
    const sent: SentMessage[] = [];
    const names = { nameOf: (p: { via: string; id: string }) => (p.id === '@ann:hs' ? 'Ann <b>' : undefined) };
    const w = new OutboxWorker({
      ledger,
      transports: new Map([['matrix', transport]]),
      clock: new ManualClock(at(2)),
      logger: recordingLogger([]),
      people: names,
      transcript: { record: (m) => sent.push(m) },
    });
    w.start();
    await w.idle();
    await ledger.transaction(async (tx) => {
      tx.record(ev('m-2', 'update', { kind: 'card_patch', ack: ['👀 ', ann, ' is on it'] }));
      tx.record(ev('m-3', 'reply', { kind: 'notice', topic: 'status', icon: '👀', text: [ann, ' is on it'] }));
    });
    w.kick();
    await w.idle();
    await w.stop();
    expect(sent.map((m) => [m.transport, m.op])).toEqual([
      ['matrix', 'post'],
      ['matrix', 'update'],
      ['matrix', 'reply'],
    ]);
    // The name is filled in before the send, as data: the surface and the transcript get the same view.
    const named = { person: { via: 'matrix', id: '@ann:hs', name: 'Ann <b>' } };
    expect(transport.updates[0]!.view).toMatchObject({ ack: ['👀 ', named, ' is on it'] });
    expect(sent[1]!.view).toMatchObject({ ack: ['👀 ', named, ' is on it'] });
    expect(sent[2]!.view).toMatchObject({ text: [named, ' is on it'] });
    expect(sent.every((m) => m.root?.transport === 'matrix')).toBe(true);
  });
});

describe('late duplicate sweep', () => {
  it('arms one timer for a drain of 20,000 suspect deliveries, reads their channel once a pass from the oldest, and deletes only the late copies', async () => {
    const clock = new ManualClock(at(0));
    const finds: Array<{ channel: string; since: number }> = [];
    const removed: string[] = [];
    let timersSet = 0;
    const counting = {
      now: () => clock.now(),
      setTimeout: (fn: () => void, ms: number) => (timersSet++, clock.setTimeout(fn, ms)),
      setInterval: (fn: () => void, ms: number) => clock.setInterval(fn, ms),
      clearTimeout: (t: Parameters<ManualClock['clearTimeout']>[0]) => clock.clearTimeout(t),
      clearInterval: (t: Parameters<ManualClock['clearInterval']>[0]) => clock.clearInterval(t),
    };
    const N = 20_000;
    const transport = {
      name: 'rec',
      // Item 7's message shows twice on the surface: the recorded one and a late copy.
      find: async (where: { channel: string }, since: Date) => {
        finds.push({ channel: where.channel, since: since.getTime() });
        return new Map([
          [
            'i-7',
            [
              { transport: 'rec', channel: '#c', id: 'late-7' },
              { transport: 'rec', channel: '#c', id: 'm-7' },
            ],
          ],
        ]);
      },
      remove: async (ref: { id: string }) => void removed.push(ref.id),
    };
    const once = new ExactlyOnce({
      ledger: { read: noThreads } as unknown as ConstructorParameters<typeof ExactlyOnce>[0]['ledger'],
      transports: new Map([['rec', transport as unknown as ChatTransport]]),
      clock: counting as unknown as ManualClock,
      logger: recordingLogger([]),
      options: { concurrency: 4, duplicateWatchMs: 0, duplicateSweepMs: [30_000] },
    });
    for (let i = 0; i < N; i++) {
      // 15 s of deliveries: all recorded before the first comes due.
      if (i % 1000 === 0) clock.set(new Date(Date.parse(at(0)) + (i * 3) / 4));
      once.recorded({
        item: item({ id: `i-${i}`, op: 'post', at: new Date(Date.parse(at(0)) - 5000 + i).toISOString() }),
        sent: { transport: 'rec', channel: '#c', id: `m-${i}` },
        sweep: true,
      });
    }
    // Each delivery adds a sweep due after the one armed: the timer stands.
    expect(timersSet).toBe(1);
    await clock.advanceAsync(40_000);
    await once.settled();
    // The channel is read once a pass (what comes due within a second goes along), the first from the oldest item.
    expect(finds[0]).toEqual({ channel: '#c', since: Date.parse(at(0)) - 5000 });
    expect(finds.every((f) => f.channel === '#c')).toBe(true);
    expect(finds.length).toBeLessThanOrEqual(16);
    expect(removed).toEqual(['late-7']);
    await once.dispose();
  });
});
