/**
 * Linear-time input handling (issue 13): everything an alert carries goes through
 * normalize → identity → query → tokenize → recall. Property tests throw adversarial strings at
 * every field and check the path neither throws nor keeps anything past the field limit; each
 * adversarial family goes through the whole path at 512 KiB. How the work grows (quadrupling the
 * input must not multiply the time by anything near 16) is a benchmark row (bench/growth-bench.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFlexIndex } from '../../../src/adapters/flexsearch/flex-index.js';
import { DEFAULT_FIELD_LIMIT, parseAlertmanagerPayload } from '../../../src/core/alertmanager.js';
import { loadCatalog } from '../../../src/core/catalog/load-catalog.js';
import { buildCatalogSnapshot } from '../../../src/core/recall/catalog-snapshot.js';
import { buildQuery } from '../../../src/core/recall/build-query.js';
import { entryForRunbookUrl, recall } from '../../../src/core/recall/recall.js';
import { splitAlertName } from '../../../src/core/recall/structural.js';
import { escapeControl } from '../../../src/core/render/escape-text.js';
import { renderConsoleThread } from '../../../src/adapters/console/render-console.js';
import { buildThread } from '../../../src/core/chat/build-thread-view.js';
import { tokenize } from '../../../src/core/tokenize.js';
import { RepriseError } from '../../../src/core/errors.js';
import { ALERT_TEXT } from '../../../bench/hostile-inputs.js';
import { noHistory, recallOpts } from '../recall/recall-fixtures.js';

const catalog = await loadCatalog(new URL('../../../catalog', import.meta.url).pathname);
const snapshot = buildCatalogSnapshot(catalog.entries, buildFlexIndex(catalog.entries));
const NOW = new Date('2026-11-30T00:00:00Z');

/** Pieces that make regexes backtrack: capital runs, camel humps, digits, separators, markers, unicode. */
const PIECES = [
  'A',
  'Ab',
  'AB',
  'a1',
  '1',
  '/',
  '?',
  '#',
  '-',
  '_',
  '.',
  ':',
  ' ',
  '\n',
  'é',
  '日',
  '\u202E',
  '\u0000',
  '%',
  '%2',
  '{',
  '}',
  '"',
  '=~',
  'Pod',
  'KubeAPI',
];
const hostile = fc
  .tuple(fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 3000 }), fc.string({ maxLength: 20 }))
  .map(([unit, n, tail]) => unit.join('').repeat(n) + tail);

function payload(fields: Record<string, string>): unknown {
  return {
    version: '4',
    status: 'firing',
    alerts: [
      {
        status: 'firing',
        labels: {
          alertname: fields['alertname'] || 'X',
          namespace: fields['namespace'] ?? 'payments',
          pod: fields['pod'] ?? 'web-7d9f8c6b5-x2k4q',
          job: fields['job'] ?? 'kubelet',
          [fields['labelName'] || 'extra']: 'v',
          severity: 'warning',
        },
        annotations: { summary: fields['summary'] ?? '', description: fields['description'] ?? '', runbook_url: fields['runbook'] ?? '' },
        startsAt: '2026-11-29T03:00:00Z',
        generatorURL: fields['generator'] ?? '',
        fingerprint: 'fp',
      },
    ],
  };
}

/**
 * The whole path an alert takes before anything is recorded. An alert the parser refuses (a
 * blank alertname) must be refused with a clear, coded error: that is not a crash.
 */
function run(fields: Record<string, string>): { tokens: string[]; text: string } | null {
  let incident;
  try {
    incident = parseAlertmanagerPayload(payload(fields)).incidents[0]!;
  } catch (err) {
    expect(err).toBeInstanceOf(RepriseError);
    expect((err as RepriseError).code).toBe('invalid_payload');
    expect((err as Error).message).toMatch(/must not be empty/);
    return null;
  }
  for (const v of [...Object.values(incident.labels), ...Object.values(incident.annotations)]) {
    expect(v.length).toBeLessThanOrEqual(DEFAULT_FIELD_LIMIT + 64);
  }
  const tokens = buildQuery(incident).tokens;
  const result = recall(incident, snapshot, noHistory, recallOpts(), NOW);
  const { card, detail } = buildThread({ incident, recall: result, recurrence: { previousCount: 0 }, now: NOW, controlsId: 'x' });
  const text = renderConsoleThread(card, detail);
  return { tokens, text };
}

describe('hostile alert text', () => {
  it('never throws, caps every field, and renders nothing unsafe, whatever the fields hold', () => {
    const field = fc.constantFrom('alertname', 'namespace', 'pod', 'job', 'labelName', 'summary', 'description', 'runbook', 'generator');
    fc.assert(
      fc.property(fc.dictionary(field, hostile, { minKeys: 1, maxKeys: 4 }), (fields) => {
        const ran = run(fields);
        if (ran === null) return;
        const { tokens, text } = ran;
        for (const t of tokens) expect(t).toBe(t.toLowerCase());
        expect(escapeControl(text)).toBe(text);
      }),
      { numRuns: 60, examples: [[{ alertname: ' ' }], [{ alertname: '\n\n' }]] },
    );
  });

  it('tokenizes any string without throwing, into lower-case terms of the input', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary', maxLength: 300 })), (s) => {
        for (const t of tokenize(s)) {
          expect(t.length).toBeGreaterThan(1);
          expect(t).toBe(t.toLowerCase());
        }
      }),
      { numRuns: 200 },
    );
  });

  // How the work grows from 128 KiB to 512 KiB is measured by the benchmark
  // (REPRISE_BENCH_ONLY=growth npm run bench); here the whole path must hold at 512 KiB.
  it.each(ALERT_TEXT.map((f) => [f.name, f.make] as const))('takes %s in every field at 512 KiB, capped, without throwing', (_name, make) => {
    const s = make(512 * 1024);
    // Straight at the tokenizer and the query builder, bypassing the field cap.
    for (const t of tokenize(s)) expect(t).toBe(t.toLowerCase());
    expect(Array.isArray(splitAlertName(s))).toBe(true);
    expect(entryForRunbookUrl(s, snapshot)).toBeUndefined();
    const ran = run({ alertname: s.slice(0, 4096), summary: s, description: s, runbook: s, generator: s, pod: s.slice(0, 4096) });
    expect(ran).not.toBeNull();
    expect(escapeControl(ran!.text)).toBe(ran!.text);
  });
});
