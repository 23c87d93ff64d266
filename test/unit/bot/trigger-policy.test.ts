import { describe, expect, it } from 'vitest';
import { TriggerPolicy, globToRegExp } from '../../../src/core/bot/trigger-policy.js';
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

describe('globToRegExp', () => {
  it('matches * and ? over the whole string, case-insensitively, with regex characters literal', () => {
    expect(globToRegExp('Kube*').test('KubePodCrashLooping')).toBe(true);
    expect(globToRegExp('Kube*').test('NodeKube')).toBe(false);
    expect(globToRegExp('prod-?').test('PROD-1')).toBe(true);
    expect(globToRegExp('a.b').test('axb')).toBe(false);
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

  it('drops the same fingerprint and status inside the dedup window only', () => {
    const p = new TriggerPolicy({ match: [], ignore: [], dedupWindowMs: 60_000 });
    expect(p.admit(inc(), NOW).admitted).toBe(true);
    const again = p.admit(inc(), new Date(NOW.getTime() + 30_000));
    expect(again.admitted).toBe(false);
    expect(p.admit({ ...inc(), status: 'resolved' }, new Date(NOW.getTime() + 30_000)).admitted).toBe(true);
    expect(p.admit(inc(), new Date(NOW.getTime() + 61_000)).admitted).toBe(true);
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
    const [out] = await bot.handle([inc()]);
    expect(out).toMatchObject({ status: 'dropped', reason: 'matches trigger.ignore rule #1' });
    await settle();
    expect(transport.posts).toHaveLength(0);
    // Nothing opened; the drop itself is recorded with its reason.
    expect(ledger.seq).toBe(1);
    expect(ledger.read.noiseCounts()['drop:policy']).toBe(1);
    expect(ledger.read.occurrences(inc().triggerKey).count).toBe(0);
  });

  it('treats a re-sent firing with the same start as the same incident: one thread, one recall', async () => {
    const { bot, transport, ledger, settle } = await setup();
    const startsAt = '2026-01-01T00:00:00.000Z';
    await bot.handle([inc({ startsAt })]);
    const [again] = await bot.handle([inc({ startsAt })]);
    expect(again).toMatchObject({ status: 'dropped', reason: 're-notification of an open firing' });
    await settle();
    expect(transport.posts).toHaveLength(1);
    expect(ledger.read.entryStats('incidents/checkout-api-oomkilled.md').recalls).toBe(1);
  });

  it('opens a new incident when the same fingerprint fires with a new start (its resolve was lost)', async () => {
    const { bot, transport, settle } = await setup();
    await bot.handle([inc({ startsAt: '2026-01-01T00:00:00.000Z' })]);
    const [next] = await bot.handle([inc({ startsAt: '2026-01-01T06:00:00.000Z' })]);
    expect(next?.status).toBe('posted');
    await settle();
    expect(transport.posts).toHaveLength(2);
  });
});
