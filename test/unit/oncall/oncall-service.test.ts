/**
 * The on-call service `serve` asks (issue 32): the route an incident is on, the provider's answer
 * kept until the shift ends, chat ids from config and by email (kept as long), and the budget: a
 * slow or throwing provider is "unknown (why)" at once, and its late answer serves the next card.
 */
import { describe, expect, it } from 'vitest';
import type { Intent } from '../../../src/core/bot/intent.js';
import { ManualClock } from '../../../src/ports/clock.js';
import { silentLogger } from '../../../src/ports/logger.js';
import type { ChatIdentityLookup, OnCallAnswer, OnCallProvider } from '../../../src/ports/oncall.js';
import { OnCallService } from '../../../src/runtime/oncall-service.js';
import type { RoutedOnCall } from '../../../src/core/oncall/oncall-view.js';
import { alert } from '../recall/recall-fixtures.js';

const clock = new ManualClock('2026-12-02T10:00:00Z');
const ann: OnCallAnswer = { known: true, people: [{ name: 'Ann', email: 'Ann@Example.org', chat: {} }], until: '2026-12-02T17:00:00Z', source: 'pagerduty' };

function provider(answer: () => Promise<OnCallAnswer>): OnCallProvider & { calls: number } {
  const p = { source: 'pagerduty', calls: 0, whoIsOnCall: () => (p.calls++, answer()) };
  return p;
}
function service(p: OnCallProvider, lookups: ChatIdentityLookup[] = [], budgetMs = 200, onLate?: (l: RoutedOnCall) => void) {
  return new OnCallService({
    ...(onLate ? { onLate } : {}),
    routes: [
      { name: 'payments', match: { namespace: 'payments*' }, provider: p },
      { name: 'default', provider: undefined },
    ],
    people: [{ name: 'ann', email: 'ann@example.org', chat: { matrix: '@ann:example.org' } }],
    lookups,
    clock,
    logger: silentLogger,
    budgetMs,
    cacheMs: 300_000,
  });
}
const incident = (namespace: string, severity = 'critical') =>
  alert({ alertname: 'KubePodCrashLooping', fingerprint: `fp-${namespace}`, labels: { namespace, pod: 'api-7d9f8c6b5-x2k4q', severity } });

describe('OnCallService', () => {
  it('routes by the first matching rule, else default, with the PagerDuty service when the alert has one', () => {
    const s = service(provider(() => Promise.resolve(ann)));
    expect(s.queryOf(incident('payments-eu'))).toEqual({ route: 'payments' });
    expect(s.queryOf(incident('shop'))).toEqual({ route: 'default' });
    expect(s.queryOf({ ...incident('shop'), labels: { pagerduty_service: 'PSVC1' } })).toEqual({ route: 'default', service: 'PSVC1' });
  });

  it('maps people to chat ids (config by email or name, then each surface by email) and keeps the answer until the shift ends', async () => {
    const p = provider(() => Promise.resolve(ann));
    const asked: string[] = [];
    const slack: ChatIdentityLookup = { surface: 'slack', userIdByEmail: (e) => (asked.push(e), Promise.resolve('U0ANN')) };
    const s = service(p, [slack]);
    const a = await s.lookup({ route: 'payments' });
    expect(a).toEqual({ ...ann, people: [{ name: 'Ann', email: 'Ann@Example.org', chat: { matrix: '@ann:example.org', slack: 'U0ANN' } }] });
    await s.lookup({ route: 'payments' });
    expect(p.calls).toBe(1);
    expect(asked).toEqual(['Ann@Example.org']);
    clock.set('2026-12-02T17:00:01Z');
    await s.lookup({ route: 'payments' });
    expect(p.calls).toBe(2);
    clock.set('2026-12-02T10:00:00Z');
  });

  it('a slow provider is unknown within the budget; its late answer serves the next lookup', async () => {
    let release: (a: OnCallAnswer) => void = () => undefined;
    const p = provider(() => new Promise<OnCallAnswer>((r) => (release = r)));
    const s = service(p, [], 20);
    expect(await s.lookup({ route: 'payments' })).toEqual({ known: false, reason: 'PagerDuty did not answer within 20 ms', source: 'pagerduty' });
    release(ann);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect((await s.lookup({ route: 'payments' })).known).toBe(true);
    expect(p.calls).toBe(1);
  });

  it('a provider that throws, or a route with no source, is unknown with why, never a rejection', async () => {
    const s = service(provider(() => Promise.reject(new Error('boom'))));
    expect(await s.lookup({ route: 'payments' })).toEqual({ known: false, reason: 'PagerDuty failed: boom', source: 'pagerduty' });
    expect(await s.lookup({ route: 'default' })).toMatchObject({ known: false, reason: 'no on-call source for the default route' });
    expect(await s.lookup({ route: 'nope' })).toMatchObject({ known: false, reason: 'no on-call route named nope' });
  });

  it('a failing email lookup names the person as text and is asked again next time', async () => {
    let fail = true;
    const slack: ChatIdentityLookup = { surface: 'slack', userIdByEmail: () => (fail ? Promise.reject(new Error('ratelimited')) : Promise.resolve('U0ANN')) };
    const p = provider(() => Promise.resolve({ ...ann, until: '2026-12-02T10:00:01Z' }));
    const s = service(p, [slack]);
    const a = await s.lookup({ route: 'payments' });
    expect(a.known && a.people[0]!.chat['slack']).toBeUndefined();
    fail = false;
    clock.set('2026-12-02T10:00:02Z');
    const b = await s.lookup({ route: 'payments' });
    expect(b.known && b.people[0]!.chat['slack']).toBe('U0ANN');
    clock.set('2026-12-02T10:00:00Z');
  });

  it('enrich: critical firings only get their answer; other intents pass unchanged', async () => {
    const s = service(provider(() => Promise.resolve(ann)));
    const intents: Intent[] = [
      { type: 'firing', incident: incident('payments') },
      { type: 'firing', incident: incident('payments', 'warning') },
      { type: 'tick' },
    ];
    const out = await s.enrich(intents);
    expect(out[0]).toMatchObject({ onCall: { route: 'payments', answer: { known: true } } });
    expect(out[1]).toEqual(intents[1]);
    expect(out[2]).toEqual({ type: 'tick' });
  });

  it('answers /reprise oncall for a route: the people its surface way, the routes it knows', async () => {
    const s = service(
      provider(() => Promise.resolve(ann)),
      [{ surface: 'slack', userIdByEmail: () => Promise.resolve('U0ANN') }],
    );
    const v = await s.answerFor('payments', 'slack');
    expect(v.title).toBe('📟 On call · payments');
    expect(v.body[0]).toEqual(['📟 on call: ', { person: { via: 'slack', id: 'U0ANN', name: 'Ann' } }, ' (PagerDuty · until 17:00 UTC)']);
    expect(v.body[1]).toEqual(['routes: payments, default']);
    const none = await s.answerFor(undefined, 'matrix');
    expect(none.body[0]).toEqual(['📟 on call: unknown (no on-call source for the default route)']);
  });

  it('enrich marks an answer the budget cut short as late, and hands the late answer on once', async () => {
    let release: (a: OnCallAnswer) => void = () => undefined;
    const lateOnes: RoutedOnCall[] = [];
    const s = service(
      provider(() => new Promise<OnCallAnswer>((r) => (release = r))),
      [],
      20,
      (l) => lateOnes.push(l),
    );
    const out = await s.enrich([
      { type: 'firing', incident: incident('payments') },
      { type: 'firing', incident: { ...incident('payments'), fingerprint: 'fp-2' } },
    ]);
    expect(out.map((i) => i.type === 'firing' && i.onCall)).toEqual([
      { route: 'payments', answer: expect.objectContaining({ known: false }), late: true },
      { route: 'payments', answer: expect.objectContaining({ known: false }), late: true },
    ]);
    expect(lateOnes).toEqual([]);
    release(ann);
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    expect(lateOnes).toHaveLength(1);
    expect(lateOnes[0]).toMatchObject({ route: 'payments', answer: { known: true } });
  });
});
