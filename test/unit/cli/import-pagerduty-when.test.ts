import { describe, expect, it } from 'vitest';
import { parseWhen } from '../../../src/cli/import-pagerduty.js';

const now = new Date('2026-12-01T12:00:00Z');

describe('--since / --until', () => {
  it('reads a duration back from now, or an ISO date or date-time', () => {
    expect(parseWhen('90d', now, '--since')).toEqual(new Date('2026-09-02T12:00:00Z'));
    expect(parseWhen('12h', now, '--since')).toEqual(new Date('2026-12-01T00:00:00Z'));
    expect(parseWhen('1h30m', now, '--since')).toEqual(new Date('2026-12-01T10:30:00Z'));
    expect(parseWhen('2026-09-01', now, '--since')).toEqual(new Date('2026-09-01T00:00:00Z'));
    expect(parseWhen('2026-09-01T06:00:00+02:00', now, '--until')).toEqual(new Date('2026-09-01T04:00:00Z'));
  });

  it('says what it takes for anything else', () => {
    for (const bad of ['0', '', 'last tuesday', '90', '-5d', '2026-13-45', '2026-09-01; rm -rf /', '9'.repeat(400) + 'd'])
      expect(parseWhen(bad, now, '--since')).toMatch(/^--since must be a duration back from now \(90d, 12h, 1h30m\) or an ISO date/);
  });
});
