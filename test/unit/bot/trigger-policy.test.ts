import { describe, expect, it } from 'vitest';
import { createStore } from '../../../src/adapters/keyv/keyv-store.js';
import { incidentIntents } from '../../../src/core/bot/intent.js';
import { TriggerPolicy } from '../../../src/core/bot/trigger-policy.js';
import { globMatcher } from '../../../src/core/glob.js';
import type { Incident } from '../../../src/core/types.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { alert, fixedSnapshot, incidentEntry } from '../recall/recall-fixtures.js';
import { botHarness } from './bot-harness.js';

const NOW = new Date('2026-01-01T00:00:00Z');

function inc(over: { alertname?: string; namespace?: string; severity?: string; fingerprint?: string; team?: string; startsAt?: string } = {}): Incident {
  const i = alert({
    alertname: over.alertname ?? 'KubePodCrashLooping',
    fingerprint: over.fingerprint ?? 'fp-1',
    labels: {
      namespace: over.namespace ?? 'payments',
      pod: 'checkout-api-7d9f8c6b5-x2k4q',
      severity: over.severity ?? 'warning',
      ...(over.team ? { team: over.team } : {}),
    },
    annotations: { summary: 'Pod is crash looping.' },
  });
  return over.startsAt ? { ...i, startsAt: over.startsAt } : i;
}

describe('globMatcher', () => {
  it('matches * and ? over the whole string, case-insensitively, with regex characters literal', () => {
    expect(globMatcher('Kube*')('KubePodCrashLooping')).toBe(true);
    expect(globMatcher('Kube*')('NodeKube')).toBe(false);
    expect(globMatcher('prod-?')('PROD-1')).toBe(true);
    expect(globMatcher('a.b')('axb')).toBe(false);
    expect(globMatcher('x(y|z')('x(y|z')).toBe(true);
  });

  it('lets * cross a slash in a label value, and reads sets, alternatives and a leading !', () => {
    expect(globMatcher('team-*')('team-a/prod')).toBe(true);
    expect(globMatcher('prod-[ab]')('prod-b')).toBe(true);
    expect(globMatcher('prod-[ab]')('prod-c')).toBe(false);
    expect(globMatcher('{staging,dev}-*')('dev-eu')).toBe(true);
    expect(globMatcher('!kube-system')('payments')).toBe(true);
    expect(globMatcher('!kube-system')('kube-system')).toBe(false);
  });
});

describe('TriggerPolicy', () => {
  it('admits everything with no rules and no window', () => {
    const p = new TriggerPolicy({ match: [], ignore: [], dedupWindowMs: 0 });
    expect(p.admit(inc(), NOW)).toEqual({ admitted: true });
    expect(p.admit(inc(), NOW)).toEqual({ admitted: true });
  });

  it('drops alerts that match no `match` rule, and names why', () => {
    const p = new TriggerPolicy({ match: [{ severity: ['critical'] }, { alertname: 'Node*', namespace: 'prod-*' }], ignore: [], dedupWindowMs: 0 });
    expect(p.admit(inc({ severity: 'critical' }), NOW).admitted).toBe(true);
    expect(p.admit(inc({ alertname: 'NodeDown', namespace: 'prod-eu' }), NOW).admitted).toBe(true);
    expect(p.admit(inc({ alertname: 'NodeDown', namespace: 'staging' }), NOW)).toEqual({ admitted: false, reason: 'matches no trigger.match rule' });
  });

  it('drops alerts matching an `ignore` rule by label glob', () => {
    const p = new TriggerPolicy({ match: [], ignore: [{ labels: { team: 'sandbox-*' } }], dedupWindowMs: 0 });
    expect(p.admit(inc({ team: 'sandbox-42' }), NOW)).toEqual({ admitted: false, reason: 'matches trigger.ignore rule #1' });
    expect(p.admit(inc({ team: 'payments' }), NOW).admitted).toBe(true);
  });

  it('drops a re-send inside the dedup window of the last admission the ledger recorded, only', () => {
    const p = new TriggerPolicy({ match: [], ignore: [], dedupWindowMs: 60_000 });
    const at = (s: number) => new Date(NOW.getTime() + s * 1000);
    expect(p.admit(inc(), NOW).admitted).toBe(true);
    expect(p.admit(inc(), at(30), NOW.toISOString())).toMatchObject({ admitted: false, reason: expect.stringMatching(/re-sent 30 s ago/) });
    expect(p.admit(inc(), at(61), NOW.toISOString()).admitted).toBe(true);
    // Nothing recorded (a write that failed): not a re-send.
    expect(p.admit(inc(), at(30), undefined).admitted).toBe(true);
  });
});

describe('RepriseBot with a trigger policy and Alertmanager re-notifications', () => {
  async function setup(policy?: TriggerPolicy) {
    const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
      resource: 'payments/checkout-api',
      title: 'checkout-api OOMKilled',
      cause: 'cache',
      resolution: 'rollback',
    });
    const h = await botHarness({ snapshot: fixedSnapshot([oom], { [oom.id]: 30 }), clock: new ManualClock(NOW), ...(policy ? { policy } : {}) });
    return { bot: h.bot, ledger: h.ledger, transport: h.transport, settle: h.settle };
  }

  it('records nothing and posts nothing for an ignored alert', async () => {
    const { bot, transport, ledger, settle } = await setup(new TriggerPolicy({ match: [], ignore: [{ alertname: 'KubePod*' }], dedupWindowMs: 0 }));
    const [out] = await bot.handle(incidentIntents([inc()]));
    expect(out).toMatchObject({ status: 'dropped', reason: 'matches trigger.ignore rule #1' });
    await settle();
    expect(transport.posts).toHaveLength(0);
    // Nothing opened; the drop itself is recorded with its reason.
    expect(ledger.seq).toBe(1);
    expect(ledger.read.noiseCounts()['drop:policy']).toBe(1);
    expect(ledger.read.occurrences(inc().triggerKey).count).toBe(0);
  });

  it('keeps the dedup memory in the ledger: a firing whose write failed is not dropped when Alertmanager retries it', async () => {
    const store = createStore('memory://', '');
    const append = store.appendLog.bind(store);
    let fail = true;
    store.appendLog = async (log, values, opts) => {
      if (fail) {
        fail = false;
        throw new Error('SQLITE_BUSY: database is locked');
      }
      return append(log, values, opts);
    };
    const oom = incidentEntry('incidents/checkout-api-oomkilled.md', {
      resource: 'payments/checkout-api',
      title: 'checkout-api OOMKilled',
      cause: 'cache',
      resolution: 'rollback',
    });
    const clock = new ManualClock(NOW);
    const h = await botHarness({
      snapshot: fixedSnapshot([oom], { [oom.id]: 30 }),
      clock,
      store,
      policy: new TriggerPolicy({ match: [], ignore: [], dedupWindowMs: 60_000 }),
    });
    await expect(h.bot.handle(incidentIntents([inc()]))).rejects.toThrow(/SQLITE_BUSY/);
    clock.advance(10_000);
    // Alertmanager retries the group (it was answered 5xx): the firing goes on, once.
    expect((await h.bot.handle(incidentIntents([inc()])))[0]).toMatchObject({ status: 'posted' });
    clock.advance(10_000);
    expect((await h.bot.handle(incidentIntents([inc()])))[0]).toMatchObject({ status: 'dropped', reason: expect.stringMatching(/inside the dedup window/) });
    await h.settle();
    expect(h.transport.posts).toHaveLength(1);
  });

  it('treats a re-sent firing with the same start as the same incident: one thread, one recall', async () => {
    const { bot, transport, ledger, settle } = await setup();
    const startsAt = '2026-01-01T00:00:00.000Z';
    await bot.handle(incidentIntents([inc({ startsAt })]));
    const [again] = await bot.handle(incidentIntents([inc({ startsAt })]));
    expect(again).toMatchObject({ status: 'dropped', reason: 're-notification of an open firing' });
    await settle();
    expect(transport.posts).toHaveLength(1);
    expect(ledger.read.entryStats('incidents/checkout-api-oomkilled.md').recalls).toBe(1);
  });

  it('opens a new incident when the same fingerprint fires with a new start (its resolve was lost)', async () => {
    const { bot, transport, settle } = await setup();
    await bot.handle(incidentIntents([inc({ startsAt: '2026-01-01T00:00:00.000Z' })]));
    const [next] = await bot.handle(incidentIntents([inc({ startsAt: '2026-01-01T06:00:00.000Z' })]));
    expect(next?.status).toBe('posted');
    await settle();
    expect(transport.posts).toHaveLength(2);
  });
});
