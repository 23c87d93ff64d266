import { describe, expect, it } from 'vitest';
import { rotationAt, rotationProblem, zoneOffsetMs, type Rotation } from '../../../src/core/oncall/rotation.js';

const base: Rotation = { people: ['ann', 'bob', 'cy'], every: 'weekly', handoff: '09:00', timezone: 'UTC', start: '2026-11-30', overrides: [] };
const at = (iso: string): Date => new Date(iso);

describe('rotationAt (UTC)', () => {
  it('weekly: the first person from the start handoff, the next one a week later at the handoff', () => {
    expect(rotationAt(base, at('2026-11-30T09:00:00Z'))).toEqual({ person: 'ann', until: '2026-12-07T09:00:00.000Z', override: false });
    expect(rotationAt(base, at('2026-12-07T08:59:59Z')).person).toBe('ann');
    expect(rotationAt(base, at('2026-12-07T09:00:00Z'))).toEqual({ person: 'bob', until: '2026-12-14T09:00:00.000Z', override: false });
    expect(rotationAt(base, at('2026-12-14T09:00:00Z')).person).toBe('cy');
    // Wraps around.
    expect(rotationAt(base, at('2026-12-21T09:00:00Z')).person).toBe('ann');
  });

  it('daily: hands off every day at the handoff time', () => {
    const daily: Rotation = { ...base, every: 'daily' };
    expect(rotationAt(daily, at('2026-12-01T08:59:00Z'))).toEqual({ person: 'ann', until: '2026-12-01T09:00:00.000Z', override: false });
    expect(rotationAt(daily, at('2026-12-01T09:00:00Z'))).toEqual({ person: 'bob', until: '2026-12-02T09:00:00.000Z', override: false });
    expect(rotationAt(daily, at('2026-12-03T12:00:00Z')).person).toBe('ann');
  });

  it('before the start the first person holds it until the first handoff', () => {
    expect(rotationAt(base, at('2026-11-20T00:00:00Z'))).toEqual({ person: 'ann', until: '2026-11-30T09:00:00.000Z', override: false });
  });

  it('an override wins while it lasts; the regular shift says until the override starts', () => {
    const r: Rotation = { ...base, overrides: [{ from: '2026-12-02T12:00:00Z', to: '2026-12-03T12:00:00Z', person: 'dee' }] };
    expect(rotationAt(r, at('2026-12-02T11:00:00Z'))).toEqual({ person: 'ann', until: '2026-12-02T12:00:00.000Z', override: false });
    expect(rotationAt(r, at('2026-12-02T12:00:00Z'))).toEqual({ person: 'dee', until: '2026-12-03T12:00:00.000Z', override: true });
    expect(rotationAt(r, at('2026-12-03T12:00:00Z')).person).toBe('ann');
  });

  it('an override across a handoff lasts to its end; the rotation resumes with whoever is due', () => {
    const r: Rotation = { ...base, overrides: [{ from: '2026-12-06T00:00:00Z', to: '2026-12-08T00:00:00Z', person: 'dee' }] };
    expect(rotationAt(r, at('2026-12-07T10:00:00Z'))).toEqual({ person: 'dee', until: '2026-12-08T00:00:00.000Z', override: true });
    expect(rotationAt(r, at('2026-12-08T00:00:00Z')).person).toBe('bob');
  });

  it('an override whose end is not after its start is ignored', () => {
    const r: Rotation = { ...base, overrides: [{ from: '2026-12-02T12:00:00Z', to: '2026-12-02T12:00:00Z', person: 'dee' }] };
    expect(rotationAt(r, at('2026-12-02T12:00:00Z')).person).toBe('ann');
  });
});

describe('rotationAt in a zone', () => {
  const berlin: Rotation = { ...base, every: 'daily', timezone: 'Europe/Berlin' };

  it('hands off at the local time (09:00 in Berlin is 08:00 UTC in winter)', () => {
    expect(zoneOffsetMs(Date.parse('2026-12-01T12:00:00Z'), 'Europe/Berlin')).toBe(3_600_000);
    expect(rotationAt(berlin, at('2026-12-01T07:59:59Z')).person).toBe('ann');
    expect(rotationAt(berlin, at('2026-12-01T08:00:00Z'))).toEqual({ person: 'bob', until: '2026-12-02T08:00:00.000Z', override: false });
  });

  it('the local date decides the shift, not the UTC date (late evening in Tokyo is the next day)', () => {
    const tokyo: Rotation = { ...base, every: 'daily', timezone: 'Asia/Tokyo', handoff: '00:30' };
    // 2026-11-30T16:00Z is 01:00 on Dec 1 in Tokyo: past Dec 1's handoff, bob's shift.
    expect(rotationAt(tokyo, at('2026-11-30T16:00:00Z'))).toEqual({ person: 'bob', until: '2026-12-01T15:30:00.000Z', override: false });
  });
});

describe('rotationProblem', () => {
  it('names what cannot be computed', () => {
    expect(rotationProblem(base)).toBeUndefined();
    expect(rotationProblem({ ...base, handoff: '9am' })).toMatch(/handoff must be HH:MM/);
    expect(rotationProblem({ ...base, start: 'monday' })).toMatch(/start must be a date/);
    expect(rotationProblem({ ...base, timezone: 'Mars/Olympus' })).toMatch(/Mars\/Olympus/);
    expect(rotationProblem({ ...base, people: [] })).toMatch(/at least one person/);
  });
});
