import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { ledgerForBot } from '../../../src/core/bot/ledger-for-bot.js';
import { RepriseBot } from '../../../src/core/bot/reprise-bot.js';
import { RepriseError } from '../../../src/core/errors.js';
import { Ledger, eventKey } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { Incident } from '../../../src/core/types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import type { Logger } from '../../../src/ports/logger.js';
import type { KeyValueStore } from '../../../src/ports/store.js';
import { alert, fixedSnapshot, incidentEntry, recallOpts } from '../recall/recall-fixtures.js';
import { RecordingTransport, type RecordingTransportOptions } from './recording-transport.js';

const MIN = 60_000;
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', { resource: 'payments/checkout-api', title: 'checkout-api OOMKilled', cause: 'cache', resolution: 'rollback' });
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });

function firing(fingerprint = 'fp-checkout', severity = 'warning', pod = 'checkout-api-7d9f8c6b5-x2k4q'): Incident {
  return alert({ alertname: 'KubePodCrashLooping', fingerprint, labels: { namespace: 'payments', pod, severity }, annotations: { summary: 'Pod is crash looping.' } });
}
function resolved(fingerprint = 'fp-checkout'): Incident {
  return { ...firing(fingerprint), status: 'resolved' };
}

/** Records error logs so a swallowed failure is still visible to the test. */
function recordingLogger(errors: unknown[]): Logger {
  const l: Logger = { debug() {}, info() {}, warn() {}, error: (o) => void errors.push(o), child: () => l };
  return l;
}

async function setup(transportOpts: RecordingTransportOptions = {}) {
  const store: KeyValueStore = createStore('memory://', '');
  const ledger = await Ledger.open(store);
  const clock = new ManualClock('2026-01-01T00:00:00Z');
  const transport = new RecordingTransport(transportOpts);
  const errors: unknown[] = [];
  const bot = new RepriseBot({ catalog: () => snapshot, ledger: ledgerForBot(ledger), transport, clock, logger: recordingLogger(errors), recall: recallOpts() });
  const events = async (): Promise<LedgerEvent[]> => {
    const out: LedgerEvent[] = [];
    for (let s = 1; s <= ledger.seq; s++) out.push((await store.get<LedgerEvent>(eventKey(s)))!);
    return out;
  };
  return { store, ledger, clock, transport, bot, errors, events };
}

const TK = firing().triggerKey;

describe('RepriseBot: firing and resolve', () => {
  it('records the open first, then posts the RCA thread, then records where it was delivered', async () => {
    const { bot, transport, ledger, events } = await setup();
    const [out] = await bot.handle([firing()]);
    expect(out).toMatchObject({ status: 'posted', threadId: 't-1', triggerKey: TK, answer: { kind: 'incident', entry: oom.id } });
    expect(transport.posts).toHaveLength(1);
    expect(transport.posts[0]?.message).toMatchObject({ kind: 'rca', triggerKey: TK, answer: { entry: oom.id } });
    expect(transport.posts[0]?.message.text.split('\n')[0]).toBe('🔍 KubePodCrashLooping — payments/checkout-api · severity warning');
    const [open, delivered] = await events();
    expect(open).toEqual(expect.objectContaining({ type: 'open', fingerprint: 'fp-checkout', triggerKey: TK, kind: 'recall', entry: oom.id, answerKind: 'incident', verdict: 'action_suggested', resolvable: true, at: '2026-01-01T00:00:00.000Z' }));
    expect(open).not.toHaveProperty('threadId');
    expect(delivered).toEqual({ type: 'delivered', openId: (open as { id: string }).id, fingerprint: 'fp-checkout', transport: 'console', messageRef: 't-1', at: '2026-01-01T00:00:00.000Z' });
    expect(ledger.occurrences(TK).newestOpen?.threadId).toBe('t-1');
  });

  it('shows nothing it could not record: an unwritable store means no thread, and an error', async () => {
    const { bot, transport, ledger } = await setup();
    const broken = ledgerForBot(ledger);
    const failing = new RepriseBot({
      catalog: () => snapshot,
      ledger: { ...broken, transaction: async () => Promise.reject(new Error('SQLITE_READONLY: attempt to write a readonly database')) },
      transport,
      clock: new ManualClock('2026-01-01T00:00:00Z'),
      logger: recordingLogger([]),
      recall: recallOpts(),
    });
    await expect(failing.handle([firing()])).rejects.toThrow(/readonly/);
    expect(transport.calls).toEqual([]);
    // The same transport works for a bot whose store does.
    await bot.handle([firing()]);
    expect(transport.posts).toHaveLength(1);
  });

  it('replies "✅ resolved after N min" into that thread on resolve, timed from the alert\'s own start', async () => {
    const { bot, transport, clock, ledger } = await setup();
    const f = firing();
    await bot.handle([f]);
    clock.advance(23 * MIN);
    const [out] = await bot.handle([resolved()]);
    expect(out).toEqual({ status: 'resolved', fingerprint: 'fp-checkout', triggerKey: TK, threadId: 't-1', paired: true });
    // The alert started 10 min before the bot saw it: it ran 33 min, not the 23 the bot watched.
    expect(Date.parse(f.startsAt)).toBe(Date.parse('2026-01-01T00:00:00Z') - 10 * MIN);
    expect(transport.replies).toEqual([{ threadId: 't-1', message: { kind: 'resolved', triggerKey: TK, answer: null, text: '✅ resolved after 33 min' } }]);
    expect(ledger.entryStats(oom.id)).toMatchObject({ recalls: 1, resolved: 1 });
  });

  it('uses the alert\'s endsAt when the resolve carries one, the ledger clock otherwise', async () => {
    const { bot, transport, clock } = await setup();
    await bot.handle([firing()]);
    clock.advance(60 * MIN); // delivered late: Alertmanager retried for an hour
    await bot.handle([{ ...resolved(), endsAt: new Date(Date.parse('2026-01-01T00:00:00Z') + 4 * MIN).toISOString() }]);
    expect(transport.replies.map((r) => r.message.text)).toEqual(['✅ resolved after 14 min']);
  });

  it('treats a re-sent alert without a start time of its own as the same firing', async () => {
    const { bot, transport, clock, ledger } = await setup();
    const noStart = (): Incident => ({ ...firing('fp-nostart'), startsAt: clock.now().toISOString(), startsAtEstimated: true });
    expect((await bot.handle([noStart()]))[0]?.status).toBe('posted');
    clock.advance(5 * MIN);
    expect((await bot.handle([noStart()]))[0]).toMatchObject({ status: 'dropped', reason: 're-notification of an open firing' });
    expect(transport.posts).toHaveLength(1);
    expect(ledger.occurrences(TK).count).toBe(1);
  });

  it('buffers a resolve that arrives before its open: no reply, paired with the next open', async () => {
    const { bot, transport, ledger, clock } = await setup();
    const [early] = await bot.handle([resolved()]);
    expect(early).toMatchObject({ status: 'resolved', paired: false });
    expect(early).not.toHaveProperty('threadId');
    expect(transport.replies).toHaveLength(0);
    expect(transport.posts).toHaveLength(0);
    clock.advance(MIN);
    await bot.handle([firing()]);
    expect(ledger.openEpisodes('fp-checkout')).toHaveLength(0);
    expect(ledger.recentEpisodes(TK)[0]).toMatchObject({ fingerprint: 'fp-checkout', threadId: 't-1', resolvedAt: '2026-01-01T00:00:00.000Z' });
  });

  it('marks the new thread resolved when its open meets a buffered resolve', async () => {
    // Ledger.record returns the episode an open closes against a buffered resolve "so the
    // caller can reply into its thread" (ledger.ts); SPEC §9 puts "✅ resolved" in the thread.
    const { bot, transport, clock } = await setup();
    await bot.handle([resolved()]);
    clock.advance(MIN);
    await bot.handle([firing()]);
    expect(transport.replies.map((r) => ({ threadId: r.threadId, kind: r.message.kind }))).toEqual([{ threadId: 't-1', kind: 'resolved' }]);
  });

  it('handles a batch in order, one outcome per incident', async () => {
    const { bot, transport } = await setup();
    const outs = await bot.handle([firing('fp-1'), firing('fp-2', 'warning', 'billing-api-7d9f8c6b5-x2k4q'), resolved('fp-1')]);
    expect(outs.map((o) => o.status)).toEqual(['posted', 'posted', 'resolved']);
    expect(outs[1]).toMatchObject({ answer: null });
    expect(transport.replies.map((r) => r.threadId)).toEqual(['t-1']);
  });

  it('preview recalls without recording or posting', async () => {
    const { bot, transport, ledger } = await setup();
    expect(bot.preview(firing()).answer?.entry).toBe(oom.id);
    expect(ledger.seq).toBe(0);
    expect(transport.calls).toHaveLength(0);
  });
});

describe('RepriseBot: silence', () => {
  it('suppresses a non-critical firing: no message, no ledger open', async () => {
    const { bot, transport, ledger, clock } = await setup();
    await bot.handle([firing()]);
    const { event } = await bot.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    expect(event).toEqual({ type: 'silence', triggerKey: TK, user: 'ann', until: '2026-01-01T01:00:00.000Z', at: '2026-01-01T00:00:00.000Z' });
    // The silence is announced in the trigger's thread.
    expect(transport.replies).toEqual([{ threadId: 't-1', message: expect.objectContaining({ kind: 'silenced', text: '🔕 silenced by @ann until 2026-01-01T01:00:00.000Z' }) }]);
    const seq = ledger.seq;
    clock.advance(10 * MIN);
    const [out] = await bot.handle([firing('fp-again')]);
    expect(out).toEqual({ status: 'silenced', fingerprint: 'fp-again', triggerKey: TK, until: '2026-01-01T01:00:00.000Z' });
    expect(transport.posts).toHaveLength(1);
    expect(ledger.seq).toBe(seq);
    expect(ledger.occurrences(TK).count).toBe(1);
    // Once it lapses, the trigger posts again.
    clock.advance(51 * MIN);
    expect((await bot.handle([firing('fp-later')]))[0]?.status).toBe('posted');
  });

  it('is ended by a critical firing, which posts and records why', async () => {
    const { bot, transport, events, clock } = await setup();
    await bot.handle([firing('fp-0')]);
    await bot.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '4h' });
    clock.advance(5 * MIN);
    const crit = firing('fp-crit', 'critical');
    expect(crit.triggerKey).toBe(TK);
    const [out] = await bot.handle([crit]);
    expect(out?.status).toBe('posted');
    expect(transport.posts).toHaveLength(2);
    const evs = await events();
    expect(evs.map((e) => e.type)).toEqual(['open', 'delivered', 'silence', 'silence', 'open', 'delivered']);
    expect(evs[3]).toMatchObject({ user: 'reprise:critical', until: '2026-01-01T00:05:00.000Z' });
    // The silence stays ended for the next, non-critical firing.
    expect((await bot.handle([firing('fp-warn')]))[0]?.status).toBe('posted');
  });

  it('is ended by a 👎 cast after it, but not by one cast before it', async () => {
    const older = await setup();
    await older.bot.handle([firing()]);
    await older.bot.feedback({ triggerKey: TK, user: 'bob', action: 'down' });
    older.clock.advance(MIN);
    await older.bot.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    older.clock.advance(MIN);
    expect((await older.bot.handle([firing('fp-2')]))[0]?.status).toBe('silenced');

    const newer = await setup();
    await newer.bot.handle([firing()]);
    await newer.bot.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    newer.clock.advance(MIN);
    await newer.bot.feedback({ triggerKey: TK, user: 'bob', action: 'down' });
    newer.clock.advance(MIN);
    expect((await newer.bot.handle([firing('fp-2')]))[0]?.status).toBe('posted');
  });
});

describe('RepriseBot: failing transports', () => {
  it('records the open when posting fails, and a later resolve still pairs', async () => {
    const { bot, transport, ledger, clock, errors, events } = await setup({ failPost: true });
    const [out] = await bot.handle([firing()]);
    expect(out).toMatchObject({ status: 'posted', answer: { entry: oom.id } });
    expect(out).not.toHaveProperty('threadId');
    expect(transport.calls.map((c) => c.op)).toEqual(['post']);
    expect(errors).toHaveLength(1);
    const [open] = await events();
    expect(open).toMatchObject({ type: 'open', fingerprint: 'fp-checkout', entry: oom.id });
    expect(open).not.toHaveProperty('threadId');
    clock.advance(5 * MIN);
    const [res] = await bot.handle([resolved()]);
    expect(res).toMatchObject({ status: 'resolved', paired: true });
    expect(transport.calls.map((c) => c.op)).toEqual(['post']); // no thread to reply into
    expect(ledger.entryStats(oom.id)).toMatchObject({ recalls: 1, resolved: 1 });
  });

  it('survives a reply that fails', async () => {
    const { bot, errors } = await setup({ failReply: true });
    await bot.handle([firing()]);
    const [res] = await bot.handle([resolved()]);
    expect(res).toMatchObject({ status: 'resolved', paired: true, threadId: 't-1' });
    expect(errors).toHaveLength(1);
  });
});

describe('RepriseBot: feedback validation', () => {
  const invalid = async (bot: RepriseBot, input: unknown, message: RegExp): Promise<void> => {
    const err = await bot.feedback(input).then(() => undefined, (e: unknown) => e);
    expect(err, JSON.stringify(input)).toBeInstanceOf(RepriseError);
    expect((err as RepriseError).code).toBe('invalid_payload');
    expect((err as RepriseError).message).toMatch(message);
  };

  it('throws invalid_payload for bad input and records nothing', async () => {
    const { bot, ledger } = await setup();
    await bot.handle([firing()]);
    const seq = ledger.seq;
    await invalid(bot, { triggerKey: TK, action: 'silence', duration: 'soon' }, /duration like 1h/);
    await invalid(bot, { triggerKey: TK, action: 'silence' }, /duration/);
    await invalid(bot, { triggerKey: TK, action: 'silence', duration: '0s' }, /duration/);
    await invalid(bot, { triggerKey: TK, action: 'silence', duration: '60d' }, /30d maximum/);
    await invalid(bot, { action: 'up' }, /triggerKey/);
    await invalid(bot, { triggerKey: '', action: 'up' }, /triggerKey/);
    await invalid(bot, { triggerKey: TK, action: 'love' }, /action/);
    await invalid(bot, null, /feedback/);
    await invalid(bot, { triggerKey: TK, action: 'up', user: 'eve\u001b[2J' }, /user must be printable/);
    await invalid(bot, { triggerKey: TK, action: 'up', user: 'adm\u202Enimda' }, /user must be printable/);
    await invalid(bot, { triggerKey: TK, action: 'up', user: 'two\nlines' }, /user must be printable/);
    expect(ledger.seq).toBe(seq);
    // The bot's queue is not wedged by the rejections.
    const ok = await bot.feedback({ triggerKey: TK, action: 'up', via: 'cli' });
    expect(ok.event).toMatchObject({ type: 'feedback', vote: 'up', user: 'cli', via: 'cli' });
    expect(ok.seq).toBe(seq + 1);
  });

  it('refuses a trigger the ledger has never seen, naming close matches, and records nothing', async () => {
    const { bot, ledger } = await setup();
    await bot.handle([firing()]);
    const seq = ledger.seq;
    const typo = TK.replace('checkout-api', 'checkout-apj');
    const err = await bot.feedback({ triggerKey: typo, action: 'down' }).then(() => undefined, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'not_found' });
    expect((err as Error).message).toContain(`did you mean ${JSON.stringify(TK)}`);
    const far = await bot.feedback({ triggerKey: 'nothing|like|it', action: 'silence', duration: '1h' }).then(() => undefined, (e: unknown) => e);
    expect(far).toMatchObject({ code: 'not_found' });
    expect((far as Error).message).not.toContain('did you mean');
    expect(ledger.seq).toBe(seq);
  });
});

describe('RepriseBot: ordering', () => {
  it('keeps ledger order equal to call order under concurrent handle and feedback calls', async () => {
    const { bot, transport, ledger, events } = await setup({ slowPost: { nth: 1, ms: 30 } });
    const billing = firing('fp-b', 'warning', 'billing-api-7d9f8c6b5-x2k4q');
    const p1 = bot.handle([firing('fp-a')]);
    const p2 = bot.feedback({ triggerKey: TK, user: 'ann', action: 'up' });
    const p3 = bot.handle([billing]);
    const p4 = bot.handle([resolved('fp-a')]);
    await Promise.all([p1, p2, p3, p4]);
    const evs = await events();
    const label = (e: LedgerEvent): string => `${e.type}:${'fingerprint' in e ? e.fingerprint : 'triggerKey' in e ? e.triggerKey : e.entry}`;
    // Each delivery is recorded right after its open, before the next call's events.
    expect(evs.map(label)).toEqual(['open:fp-a', 'delivered:fp-a', `feedback:${TK}`, 'open:fp-b', 'delivered:fp-b', 'resolve:fp-a']);
    expect(transport.posts.map((p) => p.message.triggerKey)).toEqual([TK, billing.triggerKey]);
    expect(transport.replies.map((r) => r.threadId)).toEqual(['t-1']);
    // The 👍 landed after the open, so it counts for the recalled entry.
    expect(ledger.entryStats(oom.id)).toMatchObject({ recalls: 1, resolved: 1, up: 1 });
  });

  it('keeps going after a handle call fails', async () => {
    const { bot, ledger } = await setup();
    const broken = { ...firing(), fingerprint: '' };
    const err = await bot.handle([broken]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(RepriseError);
    expect((await bot.handle([firing()]))[0]?.status).toBe('posted');
    expect(ledger.seq).toBe(2); // its open and its delivery
  });
});

describe('RepriseBot: the track record over time', () => {
  it('recalls a second pod of the same workload ten minutes into an unresolved incident, and counts the first as a failure only past the resolve window', async () => {
    const { bot, clock, ledger } = await setup();
    // Resolves are flowing (another alert resolved): unresolved recalls can mean something.
    await bot.handle([{ ...resolved('fp-other'), triggerKey: 'other|trigger' }]);
    const [first] = await bot.handle([firing('fp-pod-1', 'warning', 'checkout-api-7d9f8c6b5-bcdfg')]);
    expect(first).toMatchObject({ status: 'posted', answer: { kind: 'incident', entry: oom.id } });
    clock.advance(10 * MIN);
    const [second] = await bot.handle([firing('fp-pod-2', 'warning', 'checkout-api-7d9f8c6b5-hjklm')]);
    expect(second).toMatchObject({ status: 'posted', answer: { kind: 'incident', entry: oom.id } });
    const confidence = (o: typeof first) => (o?.status === 'posted' ? o.answer?.confidence : undefined);
    expect(confidence(second)).toBe(confidence(first));
    expect(ledger.trackRecord(oom.id, 'incident', clock.now())).toMatchObject({ recalls: 2, failed: 0, inFlight: 2, factor: 1 });
    // A day later neither resolved: both are failures now, and the track record says so.
    clock.advance(24 * 60 * MIN);
    expect(ledger.trackRecord(oom.id, 'incident', clock.now())).toMatchObject({ failed: 2, inFlight: 0, rate: 1 / 4, factor: 1 / 3 });
    const [third] = await bot.handle([firing('fp-pod-3', 'warning', 'checkout-api-7d9f8c6b5-npqrs')]);
    expect(third).toMatchObject({ status: 'posted', answer: null });
  });

  it('fire → resolve → fire: the second recall is not less confident than the first', async () => {
    const { bot, clock } = await setup();
    const [a] = await bot.handle([firing('fp-1')]);
    clock.advance(14 * MIN);
    await bot.handle([resolved('fp-1')]);
    clock.advance(60 * MIN);
    const [b] = await bot.handle([firing('fp-2', 'warning', 'checkout-api-7d9f8c6b5-zzxzz')]);
    const confidence = (o: typeof a) => (o?.status === 'posted' ? (o.answer?.confidence ?? 0) : 0);
    expect(confidence(a)).toBeGreaterThan(0);
    expect(confidence(b)).toBeGreaterThanOrEqual(confidence(a));
  });
});
