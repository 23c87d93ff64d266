import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePagerDutyPayload, pagerDutySignature, verifyPagerDutySignature } from '../../../src/core/pagerduty.js';
import { isRepriseError } from '../../../src/core/errors.js';

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`../../fixtures/sources/${name}`, import.meta.url), 'utf8'));
const SECRET = 'pd-secret-123';

describe('parsePagerDutyPayload', () => {
  it('maps incident.triggered to a firing incident keyed by the PagerDuty incident id', () => {
    const p = parsePagerDutyPayload(fixture('pagerduty-incident-triggered.json'));
    expect(p.kind).toBe('incident');
    if (p.kind !== 'incident') return;
    expect(p.incident).toMatchObject({
      source: 'pagerduty',
      status: 'firing',
      fingerprint: 'pagerduty:PGR0VU2',
      alertname: 'checkout-api pods crash looping in payments',
      severity: 'critical',
      startsAt: '2026-11-30T18:45:22.000Z',
      generatorUrl: 'https://acme.pagerduty.com/incidents/PGR0VU2',
      labels: { service: 'checkout-api', urgency: 'high', priority: 'P1' },
    });
  });

  it('maps incident.resolved to a resolve with the same fingerprint and trigger key', () => {
    const open = parsePagerDutyPayload(fixture('pagerduty-incident-triggered.json'));
    const res = parsePagerDutyPayload(fixture('pagerduty-incident-resolved.json'));
    if (open.kind !== 'incident' || res.kind !== 'incident') throw new Error('expected incidents');
    expect(res.incident.status).toBe('resolved');
    expect(res.incident.fingerprint).toBe(open.incident.fingerprint);
    expect(res.incident.triggerKey).toBe(open.incident.triggerKey);
    expect(res.incident.endsAt).toBe('2026-11-30T19:02:10.512Z');
  });

  it('ignores other event types with a reason', () => {
    const p = parsePagerDutyPayload(fixture('pagerduty-incident-priority-updated.json'));
    expect(p).toMatchObject({ kind: 'ignored', eventType: 'incident.priority_updated', reason: expect.stringContaining('incident.priority_updated') });
  });

  it('reads incident.acknowledged as an ack by the PagerDuty user (event.agent)', () => {
    const p = parsePagerDutyPayload(fixture('pagerduty-incident-acknowledged.json'));
    expect(p).toMatchObject({ kind: 'ack', incidentId: 'PGR0VU2', agent: { id: 'PLH1HKV', name: 'Tenex Engineer' }, eventType: 'incident.acknowledged' });
  });

  it('reads incident.annotated as a note with its text, as sent', () => {
    const p = parsePagerDutyPayload(fixture('pagerduty-incident-annotated.json'));
    expect(p.kind).toBe('note');
    if (p.kind === 'note') {
      expect(p.incidentId).toBe('PGR0VU2');
      expect(p.text.length).toBeGreaterThan(0);
    }
    const hostile = fixture('pagerduty-incident-annotated.json') as { event: { data: { content: string } } };
    hostile.event.data.content = '<!channel> @room <script>x</script>';
    expect(parsePagerDutyPayload(hostile)).toMatchObject({ kind: 'note', text: '<!channel> @room <script>x</script>' });
    const broken = fixture('pagerduty-incident-annotated.json') as { event: { data: Record<string, unknown> } };
    delete broken.event.data['incident'];
    expect(() => parsePagerDutyPayload(broken)).toThrow(/incident/);
  });

  it('reads incident.reopened as a reopened firing of the same incident, starting when it reopened (a new episode)', () => {
    const body = fixture('pagerduty-incident-triggered.json') as { event: { event_type: string; occurred_at: string } };
    const first = parsePagerDutyPayload(body);
    body.event.event_type = 'incident.reopened';
    body.event.occurred_at = '2026-11-30T20:05:00Z';
    const again = parsePagerDutyPayload(body);
    expect(again.kind).toBe('incident');
    if (again.kind === 'incident' && first.kind === 'incident') {
      expect(again.incident.status).toBe('firing');
      expect(again.incident.reopened).toBe(true);
      expect(first.incident.reopened).toBeUndefined();
      expect(again.incident.fingerprint).toBe(first.incident.fingerprint);
      expect(again.incident.triggerKey).toBe(first.incident.triggerKey);
      expect(first.incident.startsAt).toBe('2026-11-30T18:45:22.000Z');
      expect(again.incident.startsAt).toBe('2026-11-30T20:05:00.000Z');
    }
  });

  it.each([
    ['no event', {}, 'event'],
    ['no event type', { event: { data: { id: 'P1' } } }, 'event_type'],
    ['triggered without data.id', { event: { event_type: 'incident.triggered', data: { title: 'x' } } }, 'event.data.id'],
    ['not an object', [1, 2], ''],
  ])('rejects %s with a coded invalid_payload naming the field', (_name, body, field) => {
    let err: unknown;
    try {
      parsePagerDutyPayload(body);
    } catch (e) {
      err = e;
    }
    expect(isRepriseError(err) && err.code).toBe('invalid_payload');
    expect((err as Error).message).toContain(field);
  });
});

describe('verifyPagerDutySignature', () => {
  const body = Buffer.from(readFileSync(new URL('../../fixtures/sources/pagerduty-incident-triggered.json', import.meta.url)));

  it('accepts the v1 HMAC-SHA256 of the raw body, alone or among several (secret rotation)', () => {
    const sig = pagerDutySignature(SECRET, body);
    expect(sig).toMatch(/^v1=[0-9a-f]{64}$/);
    expect(verifyPagerDutySignature(SECRET, body, sig)).toEqual({ ok: true });
    expect(verifyPagerDutySignature(SECRET, body, `v1=${'0'.repeat(64)}, ${sig}`)).toEqual({ ok: true });
  });

  it('rejects a missing, forged, other-secret, other-body or unversioned signature', () => {
    const sig = pagerDutySignature(SECRET, body);
    expect(verifyPagerDutySignature(SECRET, body, undefined)).toMatchObject({ ok: false, reason: expect.stringContaining('missing') });
    expect(verifyPagerDutySignature(SECRET, body, `v1=${'a'.repeat(64)}`).ok).toBe(false);
    expect(verifyPagerDutySignature(SECRET, body, pagerDutySignature('other', body)).ok).toBe(false);
    expect(verifyPagerDutySignature(SECRET, Buffer.concat([body, Buffer.from(' ')]), sig).ok).toBe(false);
    expect(verifyPagerDutySignature(SECRET, body, sig.slice(3))).toMatchObject({ ok: false, reason: expect.stringContaining('no v1') });
    expect(verifyPagerDutySignature(SECRET, body, `${sig}0`).ok).toBe(false);
  });
});
