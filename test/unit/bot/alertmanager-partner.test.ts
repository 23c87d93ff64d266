/**
 * Alertmanager as a partner (issue 12), at the bot: a 🔕 that asks for it silences there too
 * (matchers made by the adapter; here a recording stand-in), offered only when configured; and
 * threads are marked from Alertmanager's alert list instead of staying "firing".
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { describe, expect, it } from 'vitest';
import type { AlertmanagerSilencer } from '../../../src/core/bot/bot-context.js';
import { parseCommand } from '../../../src/core/bot/commands.js';
import { parseSilenceChoice, threadReplyIntent } from '../../../src/core/chat/thread-text.js';
import { rememberListed, threadMarks, type AlertmanagerAlertState } from '../../../src/core/bot/alertmanager-reconcile.js';
import type { CardView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { richText } from '../../../src/core/chat/thread-view.js';
import type { NoiseEvent } from '../../../src/core/ledger-events.js';
import type { Incident } from '../../../src/core/types.js';
import { alert, fixedSnapshot } from '../recall/recall-fixtures.js';
import { botHarness, resume } from './bot-harness.js';

const snapshot = fixedSnapshot([], {});
const firing = (fp: string, source = 'alertmanager'): Incident => ({
  ...alert({ alertname: 'KubePodCrashLooping', fingerprint: fp, labels: { namespace: 'payments', pod: `p-${fp}-7d9f8c6b5-x2k4q` } }),
  source,
});
const notices = (sent: Array<{ view: unknown }>): string[] =>
  sent.filter((s) => (s.view as NoticeView).kind === 'notice').map((s) => `${(s.view as NoticeView).icon} ${richText((s.view as NoticeView).text)}`);
const respond = { kind: 'ephemeral' as const, channel: '#rec', user: 'U1' };

function recordingSilencer(fail?: string) {
  const calls: Array<{ fingerprint: string; endsAt: string; createdBy: string; comment: string }> = [];
  const silencer: AlertmanagerSilencer = {
    silenceAlert: async (req) => {
      calls.push(req);
      if (fail) throw new Error(fail);
      return 'sil-1';
    },
  };
  return { silencer, calls };
}

describe('"silence in Alertmanager too"', () => {
  it('reads the choice from a select value, a thread reply and a command', () => {
    expect(parseSilenceChoice('4h+am')).toEqual({ duration: '4h', alertmanager: true });
    expect(parseSilenceChoice('24h am')).toEqual({ duration: '24h', alertmanager: true });
    expect(parseSilenceChoice('1h')).toEqual({ duration: '1h', alertmanager: false });
    expect(parseCommand('silence', '4h am')).toEqual({ name: 'silence', duration: '4h', alertmanager: true });
    expect(parseCommand('silence', 'kubepod|payments 4h am')).toEqual({ name: 'silence', triggerKey: 'kubepod|payments', duration: '4h', alertmanager: true });
    expect(parseCommand('silence', 'kubepod|payments 4h')).toEqual({ name: 'silence', triggerKey: 'kubepod|payments', duration: '4h', alertmanager: false });
    const thread = { transport: 'matrix', channel: '!r', id: '$e' };
    const ctx = { eventId: 'e', actor: { id: '@a:hs', via: 'matrix' }, thread };
    expect(threadReplyIntent('silence 4h am', ctx)).toMatchObject({ type: 'silence', duration: '4h', alertmanager: true });
    // Not a silence (a duration and words): no verb, so a question (issue 21 item 3).
    expect(threadReplyIntent('silence 4h because of the deploy', ctx)).toMatchObject({ type: 'question' });
  });

  it('offers it on the card only when Alertmanager is configured and the alert came from it', async () => {
    const plain = await botHarness({ snapshot });
    await plain.bot.handle(incidentIntents([firing('fp-1')]));
    await plain.settle();
    expect((plain.transport.posts[0]!.view as CardView).amSilence).toBeUndefined();
    const { silencer } = recordingSilencer();
    const am = await botHarness({ snapshot, alertmanager: silencer });
    await am.bot.handle(incidentIntents([firing('fp-1'), firing('fp-2', 'pagerduty')]));
    await am.settle();
    expect(am.transport.posts.map((p) => (p.view as CardView).amSilence)).toEqual([true, undefined]);
  });

  it('a 🔕 "4h + Alertmanager" silences here and there; the comment links the thread; the thread is told', async () => {
    const { silencer, calls } = recordingSilencer();
    const h = await botHarness({ snapshot, alertmanager: silencer });
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    const root = h.transport.posts[0]!.ref!;
    const controlsId = (h.transport.posts[0]!.view as CardView).controlsId;
    await h.transport.inject({
      type: 'action',
      eventId: 'sel-1',
      transport: 'rec',
      user: { id: 'U1', name: 'ann' },
      action: 'silence',
      value: '4h+am',
      target: root,
      controlsId,
      respond,
    });
    await h.bot.idle();
    await h.settle();
    expect(h.ledger.read.silence(firing('fp-1').triggerKey, h.clock.now()).active).toBe(true);
    expect(calls).toEqual([
      {
        fingerprint: 'fp-1',
        endsAt: '2026-01-01T04:00:00.000Z',
        createdBy: 'ann via Reprise (rec)',
        comment: 'Silenced from Reprise by ann. Thread: rec thread t-1',
      },
    ]);
    expect(notices(h.transport.replies)).toEqual(['🔕 silenced by ann until 04:00 UTC', '🔕 also silenced in Alertmanager until 04:00 UTC (silence sil-1)']);
  });

  it('the Alertmanager silence covers the alerts the Reprise one does (every pod of the deployment firing now), and says which', async () => {
    const calls: Array<{ fingerprint: string; fingerprints?: readonly string[] }> = [];
    const silencer: AlertmanagerSilencer = {
      silenceAlert: async (req) => {
        calls.push({ fingerprint: req.fingerprint, ...(req.fingerprints ? { fingerprints: req.fingerprints } : {}) });
        return { id: 'sil-2', matchers: ['alertname="KubePodCrashLooping"', 'namespace="payments"'], alerts: 2 };
      },
    };
    const h = await botHarness({ snapshot, alertmanager: silencer });
    const pod = (fp: string, name: string): Incident => ({
      ...alert({ alertname: 'KubePodCrashLooping', fingerprint: fp, labels: { namespace: 'payments', pod: name } }),
      source: 'alertmanager',
    });
    const a = pod('fp-a', 'web-7d9f8c6b5-x2k4q');
    const b = pod('fp-b', 'web-7d9f8c6b5-z9m7p');
    expect(a.triggerKey).toBe(b.triggerKey);
    await h.bot.handle(incidentIntents([a]));
    await h.settle();
    const root = h.transport.posts[0]!.ref!;
    const controlsId = (h.transport.posts[0]!.view as CardView).controlsId;
    // A second pod of the deployment fires on the same thread's trigger (its own thread).
    await h.bot.handle(incidentIntents([b]));
    await h.transport.inject({
      type: 'action',
      eventId: 'sel-2',
      transport: 'rec',
      user: { id: 'U1', name: 'ann' },
      action: 'silence',
      value: '4h+am',
      target: root,
      controlsId,
      respond,
    });
    await h.bot.idle();
    await h.settle();
    expect(calls).toEqual([{ fingerprint: 'fp-a', fingerprints: ['fp-a', 'fp-b'] }]);
    expect(notices(h.transport.replies).at(-1)).toBe(
      '🔕 also silenced in Alertmanager until 04:00 UTC (silence sil-2): alertname="KubePodCrashLooping", namespace="payments" — the 2 alerts of this trigger firing now, as in Reprise',
    );
  });

  it('a request recorded before a crash is made after the restart, once', async () => {
    // The first process records the 🔕 and dies while Alertmanager has not answered.
    const hung: AlertmanagerSilencer = { silenceAlert: () => new Promise<string>(() => undefined) };
    const first = await botHarness({ snapshot, alertmanager: hung });
    await first.bot.handle(incidentIntents([firing('fp-1')]));
    await first.settle();
    await first.transport.inject({
      type: 'message',
      eventId: 'm',
      transport: 'rec',
      user: { id: 'U1', name: 'ann' },
      thread: first.transport.posts[0]!.ref!,
      channel: '#rec',
      text: 'silence 4h am',
      addressed: true,
    });
    await first.ledger.close();
    first.outbox.stop();

    const { silencer, calls } = recordingSilencer();
    const second = await botHarness({ snapshot, store: first.store, clock: first.clock, alertmanager: silencer });
    expect((await resume(second.bot)).amSilences).toBe(1);
    expect((await resume(second.bot)).amSilences).toBe(0);
    await second.bot.idle();
    expect(calls).toEqual([expect.objectContaining({ fingerprint: 'fp-1', endsAt: '2026-01-01T04:00:00.000Z', createdBy: 'ann via Reprise (rec)' })]);
    const outcome = (await second.events()).filter((e): e is NoiseEvent => e.type === 'noise' && e.action === 'am_silence');
    expect(outcome).toEqual([expect.objectContaining({ reason: 'created', detail: 'also silenced in Alertmanager until 04:00 UTC (silence sil-1)' })]);
    expect((await resume(second.bot)).amSilences).toBe(0);
  });

  it('Alertmanager down: silenced in Reprise all the same, and the thread says why not there', async () => {
    const { silencer } = recordingSilencer('Alertmanager at http://127.0.0.1:9 did not answer');
    const h = await botHarness({ snapshot, alertmanager: silencer });
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    await h.transport.inject({
      type: 'reaction',
      eventId: 'r',
      transport: 'rec',
      user: { id: 'U1' },
      target: h.transport.posts[0]!.ref!,
      reaction: 'no_bell',
      removed: false,
    });
    await h.transport.inject({
      type: 'message',
      eventId: 'm',
      transport: 'rec',
      user: { id: 'U1' },
      thread: h.transport.posts[0]!.ref!,
      channel: '#rec',
      text: 'silence 1h am',
      addressed: true,
    });
    await h.bot.idle();
    await h.settle();
    expect(h.errors).toEqual([]);
    expect(notices(h.transport.replies).at(-1)).toBe(
      '⚠️ not silenced in Alertmanager: Alertmanager at http://127.0.0.1:9 did not answer; silenced in Reprise only',
    );
  });

  it('without Alertmanager configured, asking for it silences here and says so', async () => {
    const h = await botHarness({ snapshot });
    await h.bot.handle(incidentIntents([firing('fp-1')]));
    await h.settle();
    await h.transport.inject({
      type: 'message',
      eventId: 'm',
      transport: 'rec',
      user: { id: 'U1' },
      thread: h.transport.posts[0]!.ref!,
      channel: '#rec',
      text: 'silence 1h am',
      addressed: true,
    });
    await h.bot.idle();
    await h.settle();
    expect(notices(h.transport.replies).at(-1)).toMatch(/^⚠️ not silenced in Alertmanager: no Alertmanager is configured/);
  });
});

describe('reconciling threads with Alertmanager', () => {
  it('marks silenced, inhibited and vanished alerts once each, in place and recorded; active ones and other sources are left alone', async () => {
    const h = await botHarness({ snapshot });
    // What the reconcile timer keeps between rounds: the fingerprints this Alertmanager listed.
    const seen = new Set<string>();
    const reconcile = async (alerts: AlertmanagerAlertState[]): Promise<number> => {
      const [o] = await h.bot.handle({ type: 'reconcile', alerts, listedAt: h.clock.now(), seen });
      rememberListed(seen, alerts);
      return o?.status === 'reconciled' ? o.marked : -1;
    };
    await h.bot.handle(incidentIntents([firing('fp-sil'), firing('fp-inh'), firing('fp-gone'), firing('fp-live'), firing('fp-pd', 'pagerduty')]));
    await h.settle();
    h.clock.advance(60_000);
    const active = (fingerprint: string) => ({ fingerprint, state: 'active', silenced: false, inhibited: false });
    // First round: everything still active (the pagerduty alert was never Alertmanager's).
    expect(await reconcile([active('fp-sil'), active('fp-inh'), active('fp-gone'), active('fp-live')])).toBe(0);
    const list = [
      { fingerprint: 'fp-sil', state: 'suppressed', silenced: true, inhibited: false },
      { fingerprint: 'fp-inh', state: 'suppressed', silenced: false, inhibited: true },
      active('fp-live'),
    ];
    expect(await reconcile(list)).toBe(3);
    expect(await reconcile(list)).toBe(0);
    await h.settle();
    const byRoot = new Map(h.transport.posts.map((p) => [p.ref!.id, (p.view as CardView).triggerKey]));
    expect(byRoot.size).toBe(5);
    expect(h.transport.updates.map((u) => [(u.view as CardView).state, (u.view as CardView).stateNote]).sort()).toEqual([
      ['resolved', 'no longer firing in Alertmanager (no resolve was received)'],
      ['silenced', 'inhibited in Alertmanager (a related alert suppresses it)'],
      ['silenced', 'silenced in Alertmanager'],
    ]);
    const marks = (await h.events()).filter((e): e is NoiseEvent => e.type === 'noise');
    expect(marks.map((m) => [m.action, m.reason, m.fingerprint]).sort()).toEqual([
      ['mark', 'am_gone', 'fp-gone'],
      ['mark', 'am_inhibited', 'fp-inh'],
      ['mark', 'am_silenced', 'fp-sil'],
    ]);
  });

  const reconciler = (h: Awaited<ReturnType<typeof botHarness>>) => {
    const seen = new Set<string>();
    return async (alerts: AlertmanagerAlertState[]): Promise<number> => {
      const [o] = await h.bot.handle({ type: 'reconcile', alerts, listedAt: h.clock.now(), seen });
      rememberListed(seen, alerts);
      return o?.status === 'reconciled' ? o.marked : -1;
    };
  };
  const listed = (...fps: string[]): AlertmanagerAlertState[] =>
    fps.map((fingerprint) => ({ fingerprint, state: 'active', silenced: false, inhibited: false }));

  it('concludes a 🔕 thread whose alert Alertmanager stops listing (it sends no resolve for a silenced alert)', async () => {
    const h = await botHarness({ snapshot });
    const reconcile = reconciler(h);
    const a = firing('fp-quiet');
    await h.bot.handle(incidentIntents([a]));
    await h.feedback({ triggerKey: a.triggerKey, user: 'ann', action: 'silence', duration: '4h' });
    h.clock.advance(60_000);
    expect(await reconcile(listed('fp-quiet'))).toBe(0);
    expect(h.ledger.read.openIncidents(10)).toHaveLength(1);
    expect(await reconcile([])).toBe(1);
    // The open is concluded: `status` no longer counts it, the thread reads resolved, the silence is over with it.
    expect(h.ledger.read.openIncidents(10)).toHaveLength(0);
    expect(h.ledger.read.openEpisodes('fp-quiet')).toHaveLength(0);
    const events = await h.events();
    expect(events.filter((e) => e.type === 'resolve')).toEqual([expect.objectContaining({ fingerprint: 'fp-quiet', reason: 'am_gone' })]);
    expect(h.ledger.read.silence(a.triggerKey, h.clock.now())).toMatchObject({ active: false, silence: { endedBy: 'resolve' } });
    await h.settle();
    expect((h.transport.updates.at(-1)!.view as CardView).state).toBe('resolved');
    expect(await reconcile([])).toBe(0);
    // Alertmanager's own resolve, if one comes after all, is a duplicate: it changes nothing.
    const outs = await h.bot.handle(incidentIntents([{ ...a, status: 'resolved' }]));
    expect(outs).toEqual([expect.objectContaining({ status: 'dropped', reason: expect.stringMatching(/^duplicate resolve/) })]);
  });

  /** A bot whose alert `fp` was silenced "4h + Alertmanager" from its card, a minute ago, with no round run yet. */
  async function silencedFromCard(fp: string, fail?: string) {
    const h = await botHarness({ snapshot, alertmanager: recordingSilencer(fail).silencer });
    await h.bot.handle(incidentIntents([firing(fp)]));
    await h.settle();
    const card = h.transport.posts[0]!;
    const controlsId = (card.view as CardView).controlsId;
    const user = { id: 'U1', name: 'ann' };
    await h.transport.inject({
      type: 'action',
      eventId: `sel-${fp}`,
      transport: 'rec',
      user,
      action: 'silence',
      value: '4h+am',
      target: card.ref!,
      controlsId,
      respond,
    });
    await h.bot.idle();
    await h.settle();
    h.clock.advance(60_000);
    return h;
  }

  it('concludes a thread silenced in Alertmanager from its card even when no round listed the alert before it went', async () => {
    // Silenced from the card and resolved within one reconcile interval: no round ever listed
    // it, but this Alertmanager accepted the silence, so it holds the alert.
    const h = await silencedFromCard('fp-brief');
    expect(await reconciler(h)([])).toBe(1);
    expect((await h.events()).filter((e) => e.type === 'resolve')).toEqual([expect.objectContaining({ fingerprint: 'fp-brief', reason: 'am_gone' })]);
    expect(h.ledger.read.openIncidents(10)).toHaveLength(0);
  });

  it('a silence Alertmanager refused does not make the thread its own: unlisted, it is left alone', async () => {
    const h = await silencedFromCard('fp-other', 'connection refused');
    expect(await reconciler(h)([])).toBe(0);
    expect(h.ledger.read.openIncidents(10)).toHaveLength(1);
  });

  it('reconciles a group thread alert by alert: the ones Alertmanager dropped are concluded, the thread goes on for the rest', async () => {
    const h = await botHarness({
      snapshot,
      noise: { debounceMs: 0, cooldownMs: 0, coalesce: { group: true, labels: [], debounceMs: 30_000, maxWaitMs: 120_000, maxAlerts: 50 } },
    });
    const reconcile = reconciler(h);
    const group = [firing('fp-g1'), firing('fp-g2'), firing('fp-g3')].map((i) => ({ ...i, groupKey: '{}:{alertname="KubePodCrashLooping"}' }));
    expect((await h.bot.handle(incidentIntents(group))).map((o) => o.status)).toEqual(['posted', 'merged', 'merged']);
    h.clock.advance(60_000);
    expect(await reconcile(listed('fp-g1', 'fp-g2', 'fp-g3'))).toBe(0);
    // The lead's alert and one member are gone; one still fires.
    expect(await reconcile(listed('fp-g2'))).toBe(1);
    const resolves = (await h.events()).filter((e) => e.type === 'resolve');
    expect(resolves.map((e) => [e.fingerprint, (e as { reason?: string }).reason]).sort()).toEqual([
      ['fp-g1', 'am_gone'],
      ['fp-g3', 'am_gone'],
    ]);
    const lead = h.ledger.read.thread(h.ledger.read.openEpisodes('fp-g2')[0]!.openId!)!;
    expect(lead.state).toBe('firing');
    expect(lead.storm).toMatchObject({ count: 3, open: 1 });
    await h.settle();
    expect((h.transport.updates.at(-1)!.view as CardView).stateNote).toMatch(/^Alertmanager group: 3 alerts \(1 firing, 2 resolved\)/);
    expect(await reconcile(listed('fp-g2'))).toBe(0);
    expect(await reconcile([])).toBe(1);
    expect(h.ledger.read.openIncidents(10)).toHaveLength(0);
    expect(h.ledger.read.thread(lead.openId)!.state).toBe('resolved');
    const marks = (await h.events()).filter((e): e is NoiseEvent => e.type === 'noise' && e.action === 'mark');
    expect(marks.map((m) => m.reason)).toEqual(['am_gone']);
  });

  it('leaves a thread opened after the list was read for the next round', () => {
    const t = {
      openId: 'o',
      triggerKey: 'k',
      fingerprint: 'f',
      state: 'firing' as const,
      transports: [],
      roots: {},
      cardSeqs: {},
      messageKeys: [],
      notes: 0,
      source: 'alertmanager',
      openedAt: '2026-01-01T00:00:05.000Z',
    };
    expect(threadMarks([t], [], new Date('2026-01-01T00:00:04.000Z'), new Set(['f']), () => ['f'])).toEqual([]);
    expect(threadMarks([t], [], new Date('2026-01-01T00:00:06.000Z'), new Set(['f']), () => ['f'])).toHaveLength(1);
  });

  it('never calls "no longer firing" an alert this Alertmanager never listed (another Alertmanager sent it)', () => {
    const t = {
      openId: 'o',
      triggerKey: 'k',
      fingerprint: 'f',
      state: 'firing' as const,
      transports: [],
      roots: {},
      cardSeqs: {},
      messageKeys: [],
      notes: 0,
      source: 'alertmanager',
      openedAt: '2026-01-01T00:00:05.000Z',
    };
    expect(
      threadMarks(
        [t],
        [{ fingerprint: 'other', state: 'active', silenced: false, inhibited: false }],
        new Date('2026-01-01T00:01:00.000Z'),
        new Set(['other']),
        () => ['f'],
      ),
    ).toEqual([]);
  });
});
