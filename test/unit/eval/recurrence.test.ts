/**
 * `reprise eval recurrence` (issue 31 item 4) keeps its floors: the shipped histories replayed
 * through the real bot path (no model) show the first fix on the later cards, answer them by
 * instant recall once the drafted entry is merged, and never show history on unrelated alerts.
 * A broken history file is a clear error, never a silent pass.
 */
import { describe, expect, it } from 'vitest';
import { HISTORIES_DIR, loadHistories } from '../../../src/cli/eval-recurrence.js';
import { parseHistories, recurrenceText, runRecurrence } from '../../../src/runtime/recurrence-eval.js';
import { BUNDLED_CATALOG, loadSnapshot } from '../../../src/runtime/open-catalog.js';
import { recallOpts } from '../recall/recall-fixtures.js';

describe('eval recurrence', () => {
  it('the shipped histories: seen before ≥ 0.9, instant recall after the merge ≥ 0.6, no false seen before', async () => {
    const histories = await loadHistories(HISTORIES_DIR);
    expect(histories.length).toBeGreaterThanOrEqual(6);
    const { snapshot } = await loadSnapshot(BUNDLED_CATALOG);
    const r = await runRecurrence(histories, snapshot.entries, recallOpts());
    expect(r.errors).toEqual([]);
    expect(r.later).toBeGreaterThanOrEqual(12);
    expect(r.unrelated).toBeGreaterThanOrEqual(10);
    expect(r.seenBeforeRate).toBeGreaterThanOrEqual(0.9);
    expect(r.instantRecallRate).toBeGreaterThanOrEqual(0.6);
    expect(r.falseSeenBeforeRate).toBe(0);
    expect(recurrenceText(r)).toMatch(/seen before shows the first fix: +\d/);
  });

  it('a history that is not the same problem, told as one, is measured as a miss, not a pass', async () => {
    const [h] = parseHistories([
      {
        id: 'told-wrong',
        first: { labels: { alertname: 'KubePodCrashLooping', namespace: 'a', pod: 'api-7d9f8c6b5-x2k4q' }, startsAt: '2026-11-01T00:00:00Z', minutes: 5 },
        fix: { by: 'ann', text: 'restarted the api' },
        later: [{ labels: { alertname: 'KubePodCrashLooping', namespace: 'b', pod: 'web-7d9f8c6b5-x2k4q' }, startsAt: '2026-11-01T02:00:00Z', minutes: 5 }],
      },
    ]);
    const r = await runRecurrence([h!], [], recallOpts());
    expect(r.seenBeforeRate).toBe(0);
    expect(r.instantRecallRate).toBe(0);
    expect(recurrenceText(r)).toContain('no seen-before fix');
  });

  it('a malformed history names the file, the history and what is missing', () => {
    expect(() => parseHistories({ nope: 1 }, 'x.json')).toThrow('x.json: expected a JSON array of histories');
    expect(() => parseHistories([{ id: 'h', first: { labels: {}, startsAt: 'soon' } }], 'x.json')).toThrow('x.json: history 1 (h): "first" needs labels.alertname and a startsAt time');
    expect(() =>
      parseHistories([{ id: 'h', first: { labels: { alertname: 'A' }, startsAt: '2026-11-01T00:00:00Z' }, fix: { by: 'a', text: ' ' }, later: [] }], 'x.json'),
    ).toThrow('"fix" needs "by" and a non-empty "text"');
  });
});
