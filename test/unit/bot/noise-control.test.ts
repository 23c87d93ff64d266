/**
 * Noise control (issue 12) through `bot.handle` and `bot.tick` with a hand-moved clock: the
 * debounce, storm coalescing, the recurrence cooldown, and the silence's three endings. Every
 * drop, hold and merge must be in the ledger with its reason.
 */
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { stateDigest } from '../../../src/core/ledger/ledger-export-format.js';
import { describe, expect, it } from 'vitest';
import type { InvestigationJobsPort } from '../../../src/core/bot/bot-context.js';
import type { CoalesceOptions, NoiseOptions } from '../../../src/core/bot/noise-control.js';
import type { BotOutcome } from '../../../src/core/bot/reprise-bot.js';
import type { CardView, NoticeView } from '../../../src/core/chat/thread-view.js';
import { asRichText, richText } from '../../../src/core/chat/thread-view.js';
import { Ledger } from '../../../src/core/ledger/ledger.js';
import type { LedgerEvent, NoiseEvent } from '../../../src/core/ledger-events.js';
import type { Incident } from '../../../src/core/types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness, tick } from './bot-harness.js';

const SEC = 1000;
const MIN = 60 * SEC;
const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
  resource: 'payments/checkout-api',
  title: 'checkout-api OOMKilled',
  cause: 'cache',
  resolution: 'rollback',
});
const snapshot = fixedSnapshot([oom], { [oom.id]: 30 });

function firing(fingerprint: string, o: { severity?: string; pod?: string; alertname?: string; namespace?: string; groupKey?: string | null } = {}): Incident {
  const i = alert({
    alertname: o.alertname ?? 'KubePodCrashLooping',
    fingerprint,
    labels: { namespace: o.namespace ?? 'payments', pod: o.pod ?? 'checkout-api-7d9f8c6b5-x2k4q', severity: o.severity ?? 'warning', cluster: 'prod-eu-1' },
    annotations: { summary: 'Pod is crash looping.' },
  });
  if (o.groupKey === null) delete i.groupKey;
  else if (o.groupKey !== undefined) i.groupKey = o.groupKey;
  return i;
}
const resolvedOf = (i: Incident): Incident => ({ ...i, status: 'resolved' });
const noise = (events: LedgerEvent[]): NoiseEvent[] => events.filter((e): e is NoiseEvent => e.type === 'noise');
const opens = (events: LedgerEvent[]) => events.filter((e) => e.type === 'open');
const statuses = (outs: BotOutcome[]): string[] => outs.map((o) => o.status);

const COALESCE: CoalesceOptions = { group: true, labels: [], debounceMs: 30 * SEC, maxWaitMs: 2 * MIN, maxAlerts: 50 };
const setup = (n: Partial<NoiseOptions>, extra: { jobs?: InvestigationJobsPort } = {}) =>
  botHarness({ snapshot, noise: { debounceMs: 0, cooldownMs: 0, ...n }, ...extra });

/** A jobs port that records what the bot asked for. */
function recordingJobs() {
  const started: Array<{ openId: string; fingerprint: string; storm?: () => string[] }> = [];
  const cancelled: string[] = [];
  const port: InvestigationJobsPort = {
    start: (job) => void started.push({ openId: job.openId, fingerprint: job.incident.fingerprint, ...(job.storm ? { storm: job.storm } : {}) }),
    cancel: (fp) => {
      cancelled.push(fp);
      return true;
    },
  };
  return { port, started, cancelled };
}

describe('debounce', () => {
  it('holds a warning firing; its resolve inside the window drops both, recorded, with no message and no open', async () => {
    const { bot, transport, events, clock, settle, ledger } = await setup({ debounceMs: 2 * MIN });
    const f = firing('fp-flap');
    expect(statuses(await bot.handle(incidentIntents([f])))).toEqual(['held']);
    clock.advance(MIN);
    expect(await bot.handle(incidentIntents([resolvedOf(f)]))).toEqual([
      expect.objectContaining({ status: 'dropped', reason: expect.stringMatching(/resolved inside the debounce window/) }),
    ]);
    clock.advance(5 * MIN);
    expect(await tick(bot)).toEqual([]);
    await settle();
    expect(transport.sent).toEqual([]);
    const all = await events();
    expect(opens(all)).toEqual([]);
    expect(all.filter((e) => e.type === 'resolve')).toEqual([]);
    expect(noise(all).map((e) => `${e.action}:${e.reason}`)).toEqual(['hold:debounce', 'drop:debounce']);
    expect(noise(all)[1]!.holdId).toBe(noise(all)[0]!.holdId);
    expect(ledger.read.holdCount()).toBe(0);
  });

  it('never holds a critical firing', async () => {
    const { bot, transport, settle } = await setup({ debounceMs: 2 * MIN });
    expect(statuses(await bot.handle(incidentIntents([firing('fp-crit', { severity: 'critical' })])))).toEqual(['posted']);
    await settle();
    expect(transport.posts).toHaveLength(1);
  });

  it('posts the firing once the window lapses without a resolve, and its later resolve pairs', async () => {
    const { bot, transport, events, clock, settle, ledger } = await setup({ debounceMs: 2 * MIN });
    const f = firing('fp-real');
    await bot.handle(incidentIntents([f]));
    clock.advance(MIN);
    expect(await tick(bot)).toEqual([]);
    // A re-notification while held is not a second firing.
    expect(statuses(await bot.handle(incidentIntents([f])))).toEqual(['dropped']);
    clock.advance(MIN);
    expect(statuses(await tick(bot))).toEqual(['posted']);
    await settle();
    expect(transport.posts).toHaveLength(1);
    expect((await bot.handle(incidentIntents([resolvedOf(f)])))[0]).toMatchObject({ status: 'resolved', paired: true });
    expect(noise(await events()).map((e) => `${e.action}:${e.reason}`)).toEqual(['hold:debounce', 'drop:renotification', 'release:debounce']);
    expect(ledger.read.occurrences(f.triggerKey)).toMatchObject({ count: 1, resolved: 1 });
  });

  it('loses no held firing across a restart: the hold is re-armed from the ledger', async () => {
    const first = await setup({ debounceMs: 2 * MIN });
    await first.bot.handle(incidentIntents([firing('fp-restart')]));
    await first.ledger.close();
    first.outbox.stop();
    // A new process on the same store.
    const clock = new ManualClock(first.clock.now());
    const second = await botHarness({ snapshot, store: first.store, clock, noise: { debounceMs: 2 * MIN, cooldownMs: 0 } });
    clock.advance(MIN);
    expect(await tick(second.bot)).toEqual([]);
    clock.advance(MIN + SEC);
    expect(statuses(await tick(second.bot))).toEqual(['posted']);
    await second.settle();
    expect(second.transport.posts).toHaveLength(1);
    expect(second.ledger.read.holdCount()).toBe(0);
  });
});

describe('storm coalescing', () => {
  const storm = (n: number, o: Parameters<typeof firing>[1] = {}): Incident[] =>
    Array.from({ length: n }, (_, i) => firing(`fp-storm-${i}`, { ...o, pod: `svc-${i}-7d9f8c6b5-x2k4q` }));

  it('turns a 200-alert Alertmanager group into one thread with 200 opens and one investigation, each resolve pairing', async () => {
    const jobs = recordingJobs();
    const { bot, transport, events, settle, ledger, clock } = await setup({ coalesce: COALESCE }, { jobs: jobs.port });
    const alerts = storm(200);
    // Alertmanager sends a growing group a few times, minutes apart (its group_interval).
    const outs = [...(await bot.handle(incidentIntents(alerts.slice(0, 120))))];
    clock.advance(5 * MIN);
    outs.push(...(await bot.handle(incidentIntents(alerts.slice(120)))));
    // The first alert is posted at once; every later one folds into its thread.
    expect(statuses(outs.slice(0, 2))).toEqual(['posted', 'merged']);
    expect(outs.filter((o) => o.status === 'merged')).toHaveLength(199);
    await settle();
    expect(transport.posts).toHaveLength(1);
    const all = await events();
    expect(opens(all)).toHaveLength(200);
    expect(new Set(opens(all).map((e) => e.fingerprint)).size).toBe(200);
    expect(jobs.started).toHaveLength(1);
    // The card lists the affected workloads and counts, updated in place.
    const notes = transport.updates.map((u) => richText(asRichText((u.view as CardView).stateNote)));
    expect(notes.at(-1)).toMatch(/^Alertmanager group: 200 alerts \(200 firing\) on prod-eu-1\/payments\/svc-0, .*\(\+192 more alerts\)$/);
    // The investigation sees the storm's workloads.
    expect(jobs.started[0]!.storm?.()).toHaveLength(50);

    // Resolving all but one alert cancels nothing and keeps the card firing, saying how many resolved.
    await bot.handle(incidentIntents(alerts.slice(1).map(resolvedOf)));
    expect(jobs.cancelled).toEqual([]);
    const thread = ledger.read.thread(jobs.started[0]!.openId)!;
    expect(thread.storm).toMatchObject({ count: 200, open: 1 });
    expect(thread.state).toBe('firing');
    await settle();
    expect((transport.updates.at(-1)!.view as CardView).stateNote).toMatch(/^Alertmanager group: 200 alerts \(1 firing, 199 resolved\)/);
    // The last one ends the incident: the investigation is cancelled, the card resolved.
    await bot.handle(incidentIntents([resolvedOf(alerts[0]!)]));
    expect(jobs.cancelled).toEqual([alerts[0]!.fingerprint]);
    expect(ledger.read.thread(jobs.started[0]!.openId)!.state).toBe('resolved');
    const resolves = (await events()).filter((e) => e.type === 'resolve');
    expect(resolves).toHaveLength(200);
    // Every open paired with its resolve: nothing is left unresolved.
    expect(ledger.read.openIncidents(Number.POSITIVE_INFINITY)).toHaveLength(0);
    // The group over, its next alert starts a new thread.
    expect(statuses(await bot.handle(incidentIntents([firing('fp-after', { pod: 'after-7d9f8c6b5-x2k4q' })])))).toEqual(['posted']);
  });

  it('a 60-alert group Alertmanager cut to 50 is one thread with 50 opens, and the card and the log say what it left out', async () => {
    const h = await setup({ coalesce: COALESCE });
    const warnings: unknown[] = h.warnings;
    const group = { labels: { alertname: 'KubePodCrashLooping' }, commonLabels: { namespace: 'payments' }, truncatedAlerts: 10 };
    const alerts = storm(50).map((i) => ({ ...i, group }));
    const outs = await h.bot.handle(incidentIntents(alerts));
    expect(outs.filter((o) => o.status === 'posted')).toHaveLength(1);
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
    expect(opens(await h.events())).toHaveLength(50);
    // The first card already says it; every update keeps saying it.
    expect((h.transport.posts[0]!.view as CardView).stateNote).toContain('Alertmanager left out 10 alerts of this group');
    expect((h.transport.updates.at(-1)!.view as CardView).stateNote).toMatch(
      /^Alertmanager group: 50 alerts \(50 firing\) on .*; Alertmanager left out 10 alerts of this group/,
    );
    // Said once in the log, not once per alert.
    expect(warnings.filter((w) => (w as { truncatedAlerts?: number }).truncatedAlerts === 10)).toHaveLength(1);
  });

  it('keeps one group in one thread however slowly Alertmanager sends it, while any of its alerts fires', async () => {
    const { bot, clock } = await setup({ coalesce: COALESCE });
    const a = storm(4);
    expect(statuses(await bot.handle(incidentIntents([a[0]!])))).toEqual(['posted']);
    clock.advance(10 * MIN);
    expect(statuses(await tick(bot))).toEqual([]);
    expect(statuses(await bot.handle(incidentIntents([a[1]!])))).toEqual(['merged']);
    await bot.handle(incidentIntents([resolvedOf(a[0]!)]));
    clock.advance(10 * MIN);
    expect(statuses(await bot.handle(incidentIntents([a[2]!])))).toEqual(['merged']);
    await bot.handle(incidentIntents([a[1]!, a[2]!].map(resolvedOf)));
    // Nothing of the group fires: its next alert is a new thread.
    expect(statuses(await bot.handle(incidentIntents([a[3]!])))).toEqual(['posted']);
  });

  it('coalesces by correlation labels too (no Alertmanager group), and keeps other namespaces apart', async () => {
    const { bot, transport, events, settle } = await setup({ coalesce: { ...COALESCE, group: false, labels: ['cluster', 'namespace'] } });
    const a = storm(200, { groupKey: null }).map((i, n) =>
      n % 2 === 0 ? i : firing(`fp-other-${n}`, { namespace: 'cart', pod: `cart-${n}-7d9f8c6b5-x2k4q`, groupKey: null }),
    );
    const outs = await bot.handle(incidentIntents(a));
    expect(outs.filter((o) => o.status === 'posted')).toHaveLength(4);
    await settle();
    expect(transport.posts).toHaveLength(4);
    expect(opens(await events())).toHaveLength(200);
    const notes = transport.updates.map((u) => richText(asRichText((u.view as CardView).stateNote)));
    expect(notes.some((n) => n.startsWith('storm: 50 alerts') && n.includes('prod-eu-1/cart/'))).toBe(true);
    expect(notes.filter((n) => n.includes('prod-eu-1/cart/') && n.includes('prod-eu-1/payments/'))).toEqual([]);
  });

  it('starts a new label-batch thread once the window closes (quiet for the debounce, or past the max wait); the closed batch is flushed once', async () => {
    const { bot, events, clock, settle, transport } = await setup({ coalesce: { ...COALESCE, group: false, labels: ['cluster', 'namespace'] } });
    const a = storm(6);
    expect(statuses(await bot.handle(incidentIntents([a[0]!])))).toEqual(['posted']);
    clock.advance(20 * SEC);
    expect(statuses(await bot.handle(incidentIntents([a[1]!])))).toEqual(['merged']);
    clock.advance(31 * SEC);
    expect(statuses(await tick(bot))).toEqual([]);
    expect(noise(await events()).map((e) => `${e.action}:${e.reason}`)).toEqual(['flush:coalesce']);
    expect(await tick(bot)).toEqual([]);
    expect(statuses(await bot.handle(incidentIntents([a[2]!])))).toEqual(['posted']);
    for (let i = 3; i < 6; i++) {
      clock.advance(29 * SEC);
      expect(statuses(await bot.handle(incidentIntents([a[i]!])))).toEqual(['merged']);
    }
    clock.advance(29 * SEC);
    // 116 s after the batch's first alert: still inside the 2 min max wait…
    expect(statuses(await bot.handle(incidentIntents([firing('fp-late-1', { pod: 'late-1-7d9f8c6b5-x2k4q' })])))).toEqual(['merged']);
    clock.advance(5 * SEC);
    // …and past it now.
    expect(statuses(await bot.handle(incidentIntents([firing('fp-late-2', { pod: 'late-2-7d9f8c6b5-x2k4q' })])))).toEqual(['posted']);
    await settle();
    expect(transport.posts).toHaveLength(3);
  });

  it('keeps critical alerts apart from a warning storm, so their owners are still paged', async () => {
    const { bot } = await setup({ coalesce: COALESCE });
    const outs = await bot.handle(incidentIntents([...storm(3), firing('fp-c', { severity: 'critical', pod: 'crit-7d9f8c6b5-x2k4q' })]));
    expect(statuses(outs)).toEqual(['posted', 'merged', 'merged', 'posted']);
  });

  it('replays to the same read model (storm threads and holds included)', async () => {
    const { bot, store, ledger, clock } = await setup({ coalesce: COALESCE, debounceMs: MIN });
    await bot.handle(incidentIntents([...storm(60), firing('fp-crit', { severity: 'critical', pod: 'c-7d9f8c6b5-x2k4q' })]));
    clock.advance(2 * MIN);
    await tick(bot);
    await bot.handle(incidentIntents(storm(30).map(resolvedOf)));
    const replayed = await Ledger.replayAll(store);
    expect(stateDigest(replayed)).toBe(ledger.read.digest());
  });
});

describe('recurrence cooldown (opt-in)', () => {
  it('holds back a concluded trigger inside the cooldown, recorded; a standing 👎 re-arms it; it lapses', async () => {
    const { bot, feedback, events, clock } = await setup({ cooldownMs: 30 * MIN });
    // An instant recall concludes (verdict action_suggested).
    expect(statuses(await bot.handle(incidentIntents([firing('fp-1')])))).toEqual(['posted']);
    clock.advance(5 * MIN);
    expect(await bot.handle(incidentIntents([firing('fp-2')]))).toEqual([
      expect.objectContaining({ status: 'dropped', reason: expect.stringMatching(/recurrence cooldown/) }),
    ]);
    expect(noise(await events()).map((e) => e.reason)).toEqual(['cooldown']);
    // A standing 👎 re-arms investigation at once…
    await feedback({ triggerKey: firing('x').triggerKey, user: 'bob', action: 'down' });
    expect(statuses(await bot.handle(incidentIntents([firing('fp-3')])))).toEqual(['posted']);
    // …and clearing it restores the cooldown (counted from the last look).
    await feedback({ triggerKey: firing('x').triggerKey, user: 'bob', action: 'clear' });
    clock.advance(MIN);
    expect(statuses(await bot.handle(incidentIntents([firing('fp-4')])))).toEqual(['dropped']);
    clock.advance(30 * MIN);
    expect(statuses(await bot.handle(incidentIntents([firing('fp-5')])))).toEqual(['posted']);
  });

  it('always lets a never-concluded trigger through', async () => {
    const { bot, clock } = await setup({ cooldownMs: 30 * MIN });
    const other = (fp: string) => firing(fp, { alertname: 'NodeDiskPressure', namespace: 'kube-system', pod: 'node-exporter-abcde' });
    expect(statuses(await bot.handle(incidentIntents([other('fp-a')])))).toEqual(['posted']);
    clock.advance(MIN);
    expect(statuses(await bot.handle(incidentIntents([other('fp-b')])))).toEqual(['posted']);
  });

  it('is off by default', async () => {
    const { bot, clock } = await setup({});
    await bot.handle(incidentIntents([firing('fp-1')]));
    clock.advance(MIN);
    expect(statuses(await bot.handle(incidentIntents([firing('fp-2')])))).toEqual(['posted']);
  });
});

describe('a silence ends on each of its three causes', () => {
  const TK = firing('x').triggerKey;
  const silenced = async () => {
    const h = await setup({});
    await h.bot.handle(incidentIntents([firing('fp-0')]));
    await h.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '4h' });
    h.clock.advance(MIN);
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-quiet')])))).toEqual(['silenced']);
    h.clock.advance(MIN);
    return h;
  };

  it('the resolve of its last firing alert — even one the silence kept from being opened — not of the first', async () => {
    const h = await silenced();
    // One pod of the deployment resolves; the other still fires: the silence holds.
    await h.bot.handle(incidentIntents([resolvedOf(firing('fp-0'))]));
    expect(h.ledger.read.silence(TK, h.clock.now()).active).toBe(true);
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-third')])))).toEqual(['silenced']);
    await h.bot.handle(incidentIntents([resolvedOf(firing('fp-quiet'))]));
    expect(h.ledger.read.silence(TK, h.clock.now()).active).toBe(true);
    await h.bot.handle(incidentIntents([resolvedOf(firing('fp-third'))]));
    expect(h.ledger.read.silence(TK, h.clock.now())).toMatchObject({ active: false, silence: { endedBy: 'resolve' } });
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-next')])))).toEqual(['posted']);
  });

  it('not a duplicate resolve: the same end of an already resolved firing changes nothing', async () => {
    const h = await setup({});
    const a = firing('fp-a');
    const b = firing('fp-b');
    await h.bot.handle(incidentIntents([a, b]));
    await h.bot.handle(incidentIntents([resolvedOf(a)]));
    await h.feedback({ triggerKey: TK, user: 'ann', action: 'silence', duration: '4h' });
    const before = h.ledger.read.digest();
    // Alertmanager re-sends the resolved alert's resolve with the rest of its group.
    const outs = await h.bot.handle(incidentIntents([resolvedOf(a)]));
    expect(outs).toEqual([expect.objectContaining({ status: 'dropped', reason: expect.stringMatching(/^duplicate resolve/) })]);
    expect(h.ledger.read.silence(TK, h.clock.now()).active).toBe(true);
    expect(h.ledger.read.openEpisodes('fp-b')).toHaveLength(1);
    expect((await h.events()).filter((e) => e.type === 'resolve')).toHaveLength(1);
    expect(h.ledger.read.digest()).not.toBe(before); // only the drop is recorded…
    expect(noise(await h.events()).at(-1)).toMatchObject({ action: 'drop', reason: 'renotification', fingerprint: 'fp-a' });
    // …and the same alert firing again (a new start) is a new incident, its resolve pairing.
    h.clock.advance(MIN);
    const again = { ...a, startsAt: h.clock.now().toISOString() };
    // (critical: it ends the silence and is posted)
    await h.bot.handle(incidentIntents([{ ...again, severity: 'critical' }]));
    expect(h.ledger.read.openEpisodes('fp-a')).toHaveLength(1);
    await h.bot.handle(incidentIntents([resolvedOf(again)]));
    expect(h.ledger.read.openEpisodes('fp-a')).toHaveLength(0);
  });

  it('a critical firing', async () => {
    const h = await silenced();
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-crit', { severity: 'critical' })])))).toEqual(['posted']);
    expect(h.ledger.read.silence(TK, h.clock.now()).active).toBe(false);
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-next')])))).toEqual(['posted']);
  });

  it('a 👎 newer than the silence', async () => {
    const h = await silenced();
    await h.feedback({ triggerKey: TK, user: 'bob', action: 'down' });
    expect(h.ledger.read.silence(TK, h.clock.now())).toMatchObject({ active: false, silence: { endedBy: 'down' } });
    expect(statuses(await h.bot.handle(incidentIntents([firing('fp-next')])))).toEqual(['posted']);
  });

  it("the resolve of a firing it kept from being opened does not close that alert's next firing", async () => {
    const h = await silenced();
    await h.bot.handle(incidentIntents([resolvedOf(firing('fp-0')), resolvedOf(firing('fp-quiet'))]));
    h.clock.advance(5 * MIN);
    // The same alert fires again (a new start) within the resolve buffer: a new incident, still firing.
    const again = { ...firing('fp-quiet'), startsAt: h.clock.now().toISOString() };
    expect(statuses(await h.bot.handle(incidentIntents([again])))).toEqual(['posted']);
    expect(h.ledger.read.openEpisodes('fp-quiet')).toHaveLength(1);
    await h.settle();
    // fp-0's thread reads resolved; the new firing's thread does not.
    expect(h.transport.updates.filter((u) => (u.view as CardView).state === 'resolved')).toHaveLength(1);
  });

  it('records each firing it suppressed, with no open and no message', async () => {
    const h = await silenced();
    await h.settle();
    const all = await h.events();
    expect(opens(all)).toHaveLength(1);
    expect(noise(all)).toEqual([
      expect.objectContaining({ action: 'drop', reason: 'silence', fingerprint: 'fp-quiet', detail: expect.stringMatching(/^silenced by ann until /) }),
    ]);
    expect(h.transport.posts).toHaveLength(1);
  });
});

describe('noise control is recorded where people read it', () => {
  it('says in the thread why a storm thread lists more than one workload', async () => {
    const { bot, transport, settle } = await setup({ coalesce: COALESCE });
    await bot.handle(incidentIntents([firing('fp-a', { pod: 'a-7d9f8c6b5-x2k4q' }), firing('fp-b', { pod: 'b-7d9f8c6b5-x2k4q' })]));
    await settle();
    expect(transport.updates.map((u) => (u.view as CardView).stateNote)).toEqual([
      'Alertmanager group: 2 alerts (2 firing) on prod-eu-1/payments/a, prod-eu-1/payments/b',
    ]);
    expect(transport.replies.filter((r) => (r.view as NoticeView).kind === 'notice')).toEqual([]);
  });
});
