import { describe, expect, it } from 'vitest';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { RepriseBot, type BotOutcome } from '../../../src/core/bot/reprise-bot.js';
import { Routing } from '../../../src/core/bot/routing.js';
import type { CardView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { asRichText, richText } from '../../../src/core/chat/thread-view.js';
import { RepriseError } from '../../../src/core/errors.js';
import type { LedgerEvent } from '../../../src/core/ledger-events.js';
import type { Incident } from '../../../src/core/types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { alert, fixedSnapshot, incidentEntry, recallOpts } from '../recall/recall-fixtures.js';
import { botHarness, recordingLogger } from './bot-harness.js';
import type { RecordingTransportOptions } from './recording-transport.js';

const MIN = 60_000;
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });

function firing(fingerprint = 'fp-checkout', severity = 'warning', pod = 'checkout-api-7d9f8c6b5-x2k4q'): Incident {
  return alert({
    alertname: 'KubePodCrashLooping',
    fingerprint,
    labels: { namespace: 'payments', pod, severity },
    annotations: { summary: 'Pod is crash looping.' },
  });
}
function resolved(fingerprint = 'fp-checkout'): Incident {
  return { ...firing(fingerprint), status: 'resolved' };
}

const setup = (transport: RecordingTransportOptions = {}) => botHarness({ snapshot, transports: [transport] });
const TK = firing().triggerKey;
const notice = (v: unknown): string => ((v as NoticeView).kind === 'notice' ? `${(v as NoticeView).icon} ${richText((v as NoticeView).text)}` : '');
const status = (o: BotOutcome | undefined): string | undefined => o?.status;

describe('RepriseBot: firing and resolve', () => {
  it('records an intent handed in again under the same transaction id once (an inbox item replayed after a failover)', async () => {
    const { bot, events } = await setup();
    const [first] = await bot.handle(incidentIntents([firing()]), { txId: 'handle:item-1' });
    expect(first).toMatchObject({ status: 'posted' });
    const once = (await events()).length;
    expect(once).toBeGreaterThan(0);
    await bot.handle(incidentIntents([firing()]), { txId: 'handle:item-1' });
    expect(await events()).toHaveLength(once);
    // Another id is another transaction: the same firing again is a re-notification, recorded as noise.
    await bot.handle(incidentIntents([firing()]), { txId: 'handle:item-2' });
    expect((await events()).length).toBeGreaterThan(once);
  });

  it('records the open and its messages first, then the outbox posts the card and the analysis and records where', async () => {
    const { bot, transport, ledger, events, settle } = await setup();
    const [out] = await bot.handle(incidentIntents([firing()]));
    expect(out).toMatchObject({ status: 'posted', triggerKey: TK, answer: { kind: 'incident', entry: oom.id } });
    const before = await events();
    expect(before.map((e) => `${e.type}${e.type === 'outbox' ? `:${e.op}` : ''}`)).toEqual(['open', 'outbox:post', 'outbox:reply']);
    await settle();
    expect(transport.posts).toHaveLength(1);
    const card = transport.posts[0]!.view as CardView;
    expect(card).toMatchObject({
      kind: 'card',
      state: 'firing',
      alertname: 'KubePodCrashLooping',
      where: 'payments/checkout-api',
      triggerKey: TK,
      controls: true,
      headline: { answer: 'instant', entry: oom.id },
    });
    expect(transport.posts[0]!.to).toEqual({ transport: 'rec', channel: '#rec' });
    // The analysis goes into the thread (this surface does not show it inline).
    expect(transport.replies).toHaveLength(1);
    expect(transport.replies[0]!.view).toMatchObject({ kind: 'detail', triggerKey: TK });
    const all = await events();
    const open = all[0] as Extract<LedgerEvent, { type: 'open' }>;
    expect(open).toMatchObject({
      type: 'open',
      fingerprint: 'fp-checkout',
      triggerKey: TK,
      kind: 'recall',
      entry: oom.id,
      verdict: 'action_suggested',
      at: '2026-01-01T00:00:00.000Z',
    });
    expect(card.controlsId).toBe(open.id);
    const delivered = all.filter((e) => e.type === 'delivered');
    expect(delivered).toEqual([
      expect.objectContaining({ openId: open.id, transport: 'rec', messageRef: 't-1', channel: '#rec', root: true }),
      expect.objectContaining({ openId: open.id, transport: 'rec', root: false }),
    ]);
    expect(ledger.read.occurrences(TK).newestOpen?.threadId).toBe('t-1');
  });

  it('shows nothing it could not record: an unwritable store means no message, and an error', async () => {
    const { ledger, transport, outbox } = await setup();
    const failing = new RepriseBot({
      catalog: () => snapshot,
      ledger: { read: ledger.read, transaction: async () => Promise.reject(new Error('SQLITE_READONLY: attempt to write a readonly database')) },
      clock: new ManualClock('2026-01-01T00:00:00Z'),
      logger: recordingLogger([]),
      recall: recallOpts(),
      routing: new Routing({ transports: [{ name: 'rec', defaultChannel: '#rec', param: 'channel' }], rules: [], mentions: [] }),
      surfaces: new Map([['rec', transport]]),
      outbox,
    });
    await expect(failing.handle(incidentIntents([firing()]))).rejects.toThrow(/readonly/);
    outbox.kick();
    await outbox.idle();
    expect(transport.calls).toEqual([]);
  });

  it('resolves: the card is edited in place and "✅ resolved after N min" goes in the thread, timed from the alert\'s own start', async () => {
    const { bot, transport, clock, ledger, settle } = await setup();
    const f = firing();
    await bot.handle(incidentIntents([f]));
    await settle();
    clock.advance(23 * MIN);
    const [out] = await bot.handle(incidentIntents([resolved()]));
    expect(out).toEqual({ status: 'resolved', fingerprint: 'fp-checkout', triggerKey: TK, threadId: 't-1', paired: true });
    await settle();
    // The alert started 10 min before the bot saw it: it ran 33 min, not the 23 the bot watched.
    expect(Date.parse(f.startsAt)).toBe(Date.parse('2026-01-01T00:00:00Z') - 10 * MIN);
    expect(transport.updates).toHaveLength(1);
    expect(transport.updates[0]!.ref).toMatchObject({ id: 't-1', channel: '#rec' });
    expect(transport.updates[0]!.view).toMatchObject({
      kind: 'card',
      state: 'resolved',
      stateNote: 'resolved after 33 min',
      controlsId: (transport.posts[0]!.view as CardView).controlsId,
    });
    expect(transport.replies.map((r) => notice(r.view)).filter(Boolean)).toEqual(['✅ resolved after 33 min']);
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ recalls: 1, resolved: 1 });
  });

  it("uses the alert's endsAt when the resolve carries one, the ledger clock otherwise", async () => {
    const { bot, transport, clock, settle } = await setup();
    await bot.handle(incidentIntents([firing()]));
    clock.advance(60 * MIN); // delivered late: Alertmanager retried for an hour
    await bot.handle(incidentIntents([{ ...resolved(), endsAt: new Date(Date.parse('2026-01-01T00:00:00Z') + 4 * MIN).toISOString() }]));
    await settle();
    expect(transport.replies.map((r) => notice(r.view)).filter(Boolean)).toEqual(['✅ resolved after 14 min']);
  });

  it('delivers a resolve that was recorded before its thread was delivered after the thread, in order', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { bot, transport, settle } = await setup({ slowPost: { nth: 1, gate } });
    await bot.handle(incidentIntents([firing()]));
    // The post is still in flight (held until released) when the resolve arrives.
    await bot.handle(incidentIntents([resolved()]));
    release();
    await settle();
    expect(transport.calls.map((c) => c.op)).toEqual(['post', 'reply', 'update', 'reply']);
    expect(transport.updates[0]!.ref?.id).toBe('t-1');
  });

  it('treats a re-sent alert without a start time of its own as the same firing', async () => {
    const { bot, transport, clock, ledger, settle } = await setup();
    const noStart = (): Incident => ({ ...firing('fp-nostart'), startsAt: clock.now().toISOString(), startsAtEstimated: true });
    expect(status((await bot.handle(incidentIntents([noStart()])))[0])).toBe('posted');
    clock.advance(5 * MIN);
    expect((await bot.handle(incidentIntents([noStart()])))[0]).toMatchObject({ status: 'dropped', reason: 're-notification of an open firing' });
    await settle();
    expect(transport.posts).toHaveLength(1);
    expect(ledger.read.occurrences(TK).count).toBe(1);
  });

  it('buffers a resolve that arrives before its open, then marks the new thread resolved at once', async () => {
    const { bot, transport, ledger, clock, settle } = await setup();
    const [early] = await bot.handle(incidentIntents([resolved()]));
    expect(early).toMatchObject({ status: 'resolved', paired: false });
    expect(early).not.toHaveProperty('threadId');
    clock.advance(MIN);
    await bot.handle(incidentIntents([firing()]));
    await settle();
    expect(ledger.read.openEpisodes('fp-checkout')).toHaveLength(0);
    expect(ledger.read.recentEpisodes(TK)[0]).toMatchObject({ fingerprint: 'fp-checkout', threadId: 't-1', resolvedAt: '2026-01-01T00:00:00.000Z' });
    expect(transport.updates.map((u) => (u.view as CardView).state)).toEqual(['resolved']);
    expect(transport.replies.map((r) => notice(r.view)).filter(Boolean)).toEqual([expect.stringMatching(/^✅ resolved after/)]);
  });

  it('handles a batch in order, one outcome per incident', async () => {
    const { bot, transport, settle } = await setup();
    const outs = await bot.handle(incidentIntents([firing('fp-1'), firing('fp-2', 'warning', 'billing-api-7d9f8c6b5-x2k4q'), resolved('fp-1')]));
    expect(outs.map((o) => o.status)).toEqual(['posted', 'posted', 'resolved']);
    expect(outs[1]).toMatchObject({ answer: null });
    await settle();
    expect(transport.updates.map((u) => u.ref?.id)).toEqual(['t-1']);
  });

  it('preview recalls without recording or posting', async () => {
    const { bot, transport, ledger } = await setup();
    expect(bot.preview(firing()).answer?.entry).toBe(oom.id);
    expect(ledger.seq).toBe(0);
    expect(transport.calls).toHaveLength(0);
  });

  it('shows the whole analysis in the root message on a surface that has no threads (the console)', async () => {
    const { bot, transport, settle } = await setup({ inlineDetail: true });
    await bot.handle(incidentIntents([firing()]));
    await settle();
    expect(transport.posts[0]!.detail).toMatchObject({ kind: 'detail', triggerKey: TK });
    expect(transport.replies).toHaveLength(0);
  });
});

describe('RepriseBot: silence', () => {
  it('suppresses a non-critical firing: no message, no ledger open; announced by a card edit and a notice', async () => {
    const { bot, feedback, transport, ledger, clock, settle } = await setup();
    await bot.handle(incidentIntents([firing()]));
    await settle();
    const { event } = await feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    expect(event).toMatchObject({ type: 'silence', triggerKey: TK, user: 'ann', until: '2026-01-01T01:00:00.000Z', at: '2026-01-01T00:00:00.000Z' });
    await settle();
    expect(transport.updates.map((u) => richText(asRichText((u.view as CardView).stateNote)))).toEqual(['silenced by ann until 01:00 UTC']);
    expect(transport.replies.map((r) => notice(r.view)).filter(Boolean)).toEqual(['🔕 silenced by ann until 01:00 UTC']);
    const seq = ledger.seq;
    clock.advance(10 * MIN);
    const [out] = await bot.handle(incidentIntents([firing('fp-again')]));
    expect(out).toEqual({ status: 'silenced', fingerprint: 'fp-again', triggerKey: TK, until: '2026-01-01T01:00:00.000Z' });
    await settle();
    expect(transport.posts).toHaveLength(1);
    // Only the suppression is recorded (with its reason): no open, no message.
    expect(ledger.seq).toBe(seq + 1);
    expect(ledger.read.noiseCounts()['drop:silence']).toBe(1);
    expect(ledger.read.occurrences(TK).count).toBe(1);
    // Once it lapses, the trigger posts again.
    clock.advance(51 * MIN);
    expect(status((await bot.handle(incidentIntents([firing('fp-later')])))[0])).toBe('posted');
  });

  it('is ended by a critical firing, which posts and records why', async () => {
    const { bot, feedback, transport, events, clock, settle } = await setup();
    await bot.handle(incidentIntents([firing('fp-0')]));
    await feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '4h' });
    clock.advance(5 * MIN);
    const crit = firing('fp-crit', 'critical');
    expect(crit.triggerKey).toBe(TK);
    expect(status((await bot.handle(incidentIntents([crit])))[0])).toBe('posted');
    await settle();
    expect(transport.posts).toHaveLength(2);
    const evs = (await events()).filter((e) => e.type === 'silence');
    expect(evs.map((e) => (e as { user: string }).user)).toEqual(['ann', 'reprise:critical']);
    expect(evs[1]).toMatchObject({ until: '2026-01-01T00:05:00.000Z' });
    // The silence stays ended for the next, non-critical firing.
    expect(status((await bot.handle(incidentIntents([firing('fp-warn')])))[0])).toBe('posted');
  });

  it('is ended by a 👎 cast after it, but not by one cast before it', async () => {
    const older = await setup();
    await older.bot.handle(incidentIntents([firing()]));
    await older.feedback({ triggerKey: TK, user: 'bob', action: 'down' });
    older.clock.advance(MIN);
    await older.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    older.clock.advance(MIN);
    expect(status((await older.bot.handle(incidentIntents([firing('fp-2')])))[0])).toBe('silenced');

    const newer = await setup();
    await newer.bot.handle(incidentIntents([firing()]));
    await newer.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '1h' });
    newer.clock.advance(MIN);
    await newer.feedback({ triggerKey: TK, user: 'bob', action: 'down' });
    newer.clock.advance(MIN);
    expect(status((await newer.bot.handle(incidentIntents([firing('fp-2')])))[0])).toBe('posted');
  });
});

describe('RepriseBot: feedback validation', () => {
  const invalid = async (feedback: (input: Record<string, unknown>) => Promise<unknown>, input: unknown, message: RegExp): Promise<void> => {
    const err = await feedback(input as Record<string, unknown>).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err, JSON.stringify(input)).toBeInstanceOf(RepriseError);
    expect((err as RepriseError).code).toBe('invalid_payload');
    expect((err as RepriseError).message).toMatch(message);
  };

  it('throws invalid_payload for bad input and records nothing', async () => {
    const { bot, feedback, ledger, settle } = await setup();
    await bot.handle(incidentIntents([firing()]));
    await settle();
    const seq = ledger.seq;
    await invalid(feedback, { triggerKey: TK, action: 'silence', duration: 'soon' }, /duration like 1h/);
    await invalid(feedback, { triggerKey: TK, action: 'silence' }, /duration/);
    await invalid(feedback, { triggerKey: TK, action: 'silence', duration: '0s' }, /duration/);
    await invalid(feedback, { triggerKey: TK, action: 'silence', duration: '60d' }, /30d maximum/);
    await invalid(feedback, { action: 'up' }, /triggerKey/);
    await invalid(feedback, { triggerKey: '', action: 'up' }, /triggerKey/);
    await invalid(feedback, { triggerKey: TK, action: 'love' }, /action/);
    await invalid(feedback, null, /feedback/);
    await invalid(feedback, { triggerKey: TK, action: 'up', user: 'eve\u001b[2J' }, /user must be printable/);
    await invalid(feedback, { triggerKey: TK, action: 'up', user: 'adm\u202Enimda' }, /user must be printable/);
    await invalid(feedback, { triggerKey: TK, action: 'up', user: 'two\nlines' }, /user must be printable/);
    expect(ledger.seq).toBe(seq);
    // The bot is not wedged by the rejections.
    const ok = await feedback({ triggerKey: TK, action: 'up', via: 'cli' });
    expect(ok.event).toMatchObject({ type: 'feedback', vote: 'up', user: 'cli', via: 'cli' });
    expect(ok.seq).toBe(seq + 1);
  });

  it('refuses a trigger the ledger has never seen, naming close matches, and records nothing', async () => {
    const { bot, feedback, ledger, settle } = await setup();
    await bot.handle(incidentIntents([firing()]));
    await settle();
    const seq = ledger.seq;
    const typo = TK.replace('checkout-api', 'checkout-apj');
    const err = await feedback({ triggerKey: typo, action: 'down' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'not_found' });
    expect((err as Error).message).toContain(`did you mean ${JSON.stringify(TK)}`);
    const far = await feedback({ triggerKey: 'nothing|like|it', action: 'silence', duration: '1h' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(far).toMatchObject({ code: 'not_found' });
    expect((far as Error).message).not.toContain('did you mean');
    expect(ledger.seq).toBe(seq);
  });
});

describe('RepriseBot: ordering', () => {
  it('keeps ledger order equal to call order under concurrent handle and feedback calls', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { bot, feedback, ledger, events, settle } = await setup({ slowPost: { nth: 1, gate } });
    const billing = firing('fp-b', 'warning', 'billing-api-7d9f8c6b5-x2k4q');
    await bot.handle(incidentIntents([firing('fp-0')])); // makes the trigger known to feedback
    const p1 = bot.handle(incidentIntents([firing('fp-a')]));
    const p2 = feedback({ triggerKey: TK, user: 'ann', action: 'up' });
    const p3 = bot.handle(incidentIntents([billing]));
    const p4 = bot.handle(incidentIntents([resolved('fp-a')]));
    await Promise.all([p1, p2, p3, p4]);
    release();
    await settle();
    const label = (e: LedgerEvent): string => `${e.type}:${'fingerprint' in e ? e.fingerprint : 'triggerKey' in e ? e.triggerKey : ''}`;
    const order = (await events()).filter((e) => e.type === 'open' || e.type === 'feedback' || e.type === 'resolve').map(label);
    expect(order).toEqual(['open:fp-0', 'open:fp-a', `feedback:${TK}`, 'open:fp-b', 'resolve:fp-a']);
    // The 👍 landed after fp-a's open, so it counts for the recalled entry.
    expect(ledger.read.entryStats(oom.id)).toMatchObject({ recalls: 2, resolved: 1, up: 1 });
  });

  it('keeps going after a handle call fails', async () => {
    const { bot, ledger } = await setup();
    const broken = { ...firing(), fingerprint: '' };
    const err = await bot.handle(incidentIntents([broken])).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(RepriseError);
    expect(status((await bot.handle(incidentIntents([firing()])))[0])).toBe('posted');
    expect(ledger.seq).toBe(3); // its open and two outbox items
  });
});

describe('RepriseBot: the track record over time', () => {
  it('recalls a second pod of the same workload ten minutes into an unresolved incident, and counts the first as a failure only past the resolve window', async () => {
    const { bot, clock, ledger } = await setup();
    // Resolves are flowing (another alert resolved): unresolved recalls can mean something.
    await bot.handle(incidentIntents([{ ...resolved('fp-other'), triggerKey: 'other|trigger' }]));
    const [first] = await bot.handle(incidentIntents([firing('fp-pod-1', 'warning', 'checkout-api-7d9f8c6b5-bcdfg')]));
    expect(first).toMatchObject({ status: 'posted', answer: { kind: 'incident', entry: oom.id } });
    clock.advance(10 * MIN);
    const [second] = await bot.handle(incidentIntents([firing('fp-pod-2', 'warning', 'checkout-api-7d9f8c6b5-hjklm')]));
    expect(second).toMatchObject({ status: 'posted', answer: { kind: 'incident', entry: oom.id } });
    const confidence = (o: BotOutcome | undefined) => (o?.status === 'posted' ? o.answer?.confidence : undefined);
    expect(confidence(second)).toBe(confidence(first));
    expect(ledger.read.trackRecord(oom.id, 'incident', clock.now())).toMatchObject({ recalls: 2, failed: 0, inFlight: 2, factor: 1 });
    // A day later neither resolved: both are failures now, and the track record says so.
    clock.advance(24 * 60 * MIN);
    expect(ledger.read.trackRecord(oom.id, 'incident', clock.now())).toMatchObject({ failed: 2, inFlight: 0, rate: 1 / 4, factor: 1 / 3 });
    const [third] = await bot.handle(incidentIntents([firing('fp-pod-3', 'warning', 'checkout-api-7d9f8c6b5-npqrs')]));
    expect(third).toMatchObject({ status: 'posted', answer: null });
  });

  it('fire → resolve → fire: the second recall is not less confident than the first', async () => {
    const { bot, clock } = await setup();
    const [a] = await bot.handle(incidentIntents([firing('fp-1')]));
    clock.advance(14 * MIN);
    await bot.handle(incidentIntents([resolved('fp-1')]));
    clock.advance(60 * MIN);
    const [b] = await bot.handle(incidentIntents([firing('fp-2', 'warning', 'checkout-api-7d9f8c6b5-zzxzz')]));
    const confidence = (o: BotOutcome | undefined) => (o?.status === 'posted' ? (o.answer?.confidence ?? 0) : 0);
    expect(confidence(a)).toBeGreaterThan(0);
    expect(confidence(b)).toBeGreaterThanOrEqual(confidence(a));
  });
});
