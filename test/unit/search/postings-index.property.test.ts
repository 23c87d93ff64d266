/**
 * Properties of the recall index over random catalogs and queries (fast-check):
 * - its top k is the exhaustive scan's top k, with the same scores, ties by id, with and
 *   without query weights;
 * - after any sequence of updates it answers like an index built afresh over the resulting
 *   entries (and like the exhaustive scan over them), whether updates compact or not.
 * Scores are compared exactly: the index adds the same numbers in the same order as the scan.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildFullScanIndex } from '../../../src/core/catalog/search-corpus.js';
import { PostingsIndex } from '../../../src/core/search/postings-index.js';
import type { Candidate, Entry } from '../../../src/core/types.js';
import type { SearchIndex } from '../../../src/ports/search-index.js';
import { makeEntry } from './make-entry.js';

/** Words the tokenizer keeps as they are; the first ones are drawn far more often (Zipf-like). */
const WORDS = ['pod', 'node', 'disk', 'crash', 'memory', 'etcd', 'latency', 'quota', 'proxy', 'kafka', 'redis', 'cert', 'volume', 'queue', 'leader', 'timeout'];
const ALERTS = ['KubePodCrashLooping', 'EtcdNoLeader', 'NodeDiskFull'];

const word = fc.oneof(
  { arbitrary: fc.constantFrom(...WORDS.slice(0, 3)), weight: 6 },
  { arbitrary: fc.constantFrom(...WORDS.slice(3, 8)), weight: 3 },
  { arbitrary: fc.constantFrom(...WORDS.slice(8)), weight: 1 },
);
const text = (max: number) => fc.array(word, { maxLength: max }).map((ws) => ws.join(' '));

const entryText = fc.record({
  title: fc.oneof({ arbitrary: text(6), weight: 9 }, { arbitrary: word.map((w) => `${w} `.repeat(20)), weight: 1 }),
  description: text(8),
  tags: fc.array(word, { maxLength: 3 }),
  alerts: fc.array(fc.constantFrom(...ALERTS), { maxLength: 1 }),
  body: text(40),
});

/** Entries with distinct ids in random order (ties are broken by id). */
const catalog = (min: number, max: number) =>
  fc
    .array(fc.tuple(fc.string({ minLength: 1, maxLength: 3, unit: fc.constantFrom('a', 'b', 'c') }), entryText), { minLength: min, maxLength: max })
    .map((xs) => xs.map(([prefix, t], i) => makeEntry(`${prefix}${i}.md`, t)));

const query = fc.array(fc.oneof(word, fc.constantFrom('unknownword', 'kubepodcrashloop', 'leader')), { minLength: 1, maxLength: 8 });
const weightsFor = (q: string[]) =>
  fc.option(
    fc.array(fc.constantFrom(0, 0.5, 1, 2, 3), { minLength: q.length, maxLength: q.length }).map((ws) => new Map(q.map((t, i) => [t, ws[i]!]))),
    { nil: undefined },
  );
const queryWithWeights = query.chain((q) => fc.tuple(fc.constant(q), weightsFor(q), fc.integer({ min: 1, max: 25 })));

const view = (cs: readonly Candidate[]): [string, number][] => cs.map((c) => [c.entry.id, c.score]);

function same(a: SearchIndex, b: SearchIndex, [q, weights, k]: [string[], Map<string, number> | undefined, number]): void {
  expect(view(a.search(q, k, weights))).toEqual(view(b.search(q, k, weights)));
}

describe('PostingsIndex properties', () => {
  it('returns the exhaustive top k with identical scores', () => {
    fc.assert(
      fc.property(catalog(1, 60), fc.array(queryWithWeights, { minLength: 1, maxLength: 6 }), (entries, queries) => {
        const index = new PostingsIndex(entries);
        const scan = buildFullScanIndex(entries);
        for (const q of queries) same(index, scan, q);
        for (const e of entries.slice(0, 5)) expect(index.score(queries[0]![0], e.id, queries[0]![1])).toBe(scan.score(queries[0]![0], e.id, queries[0]![1]));
      }),
      { numRuns: 200 },
    );
  });

  const change = (ids: string[]) =>
    fc.record({
      upserts: fc.array(
        fc.tuple(fc.oneof(fc.constantFrom(...ids, 'x.md'), fc.string({ minLength: 1, maxLength: 4, unit: fc.constantFrom('n', 'o') })), entryText),
        { maxLength: 4 },
      ),
      removed: fc.subarray([...ids, 'missing.md'], { maxLength: Math.min(4, ids.length + 1) }),
    });

  for (const churnShare of [0, 1 / 8, Number.POSITIVE_INFINITY]) {
    it(`after updates answers like an index built afresh (churnShare ${churnShare})`, () => {
      fc.assert(
        fc.property(
          catalog(0, 40).chain((entries) =>
            fc.tuple(
              fc.constant(entries),
              fc.array(change(entries.map((e) => e.id).concat('n.md')), { minLength: 1, maxLength: 4 }),
              fc.array(queryWithWeights, { minLength: 1, maxLength: 4 }),
            ),
          ),
          ([entries, changes, queries]) => {
            const index = new PostingsIndex(entries, { churnShare });
            const live = new Map(entries.map((e) => [e.id, e]));
            for (const c of changes) {
              const upserts: Entry[] = c.upserts.map(([id, t]) => makeEntry(id.endsWith('.md') ? id : `${id}.md`, t));
              index.update(upserts, c.removed);
              for (const id of c.removed) live.delete(id);
              for (const e of upserts) live.set(e.id, e);
            }
            const now = [...live.values()];
            const fresh = new PostingsIndex(now);
            const scan = buildFullScanIndex(now);
            expect(index.size).toBe(now.length);
            for (const q of queries) {
              same(index, fresh, q);
              same(index, scan, q);
            }
            for (const e of now.slice(0, 5)) expect(index.score(queries[0]![0], e.id)).toBe(fresh.score(queries[0]![0], e.id));
          },
        ),
        { numRuns: 100 },
      );
    });
  }
});
