import { describe, expect, it } from 'vitest';
import { bm25Score, buildBm25Stats, DEFAULT_BM25_PARAMS, idf } from '../../../src/core/bm25.js';
import type { Bm25Document } from '../../../src/core/bm25.js';

const k1 = 1.2;
const b = 0.75;
const idfOf = (n: number, df: number): number => Math.log(1 + (n - df + 0.5) / (df + 0.5));
const termScore = (tf: number, dl: number, avgdl: number, n: number, df: number): number =>
  (idfOf(n, df) * tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * dl) / avgdl));

describe('BM25', () => {
  // Body-only corpus: BM25F reduces to classic BM25 (body weight 1).
  const docs: Bm25Document[] = [
    { id: 'a', fields: { body: ['disk', 'full', 'disk'] } },
    { id: 'b', fields: { body: ['disk', 'slow'] } },
    { id: 'c', fields: { body: ['pod', 'crash', 'loop', 'pod'] } },
  ];
  const stats = buildBm25Stats(docs);
  const avgdl = (3 + 2 + 4) / 3;

  it('uses the SPEC defaults', () => {
    expect(DEFAULT_BM25_PARAMS).toMatchObject({ k1: 1.2, b: 0.75 });
    expect(DEFAULT_BM25_PARAMS.weights).toEqual({ title: 3, alerts: 4, tags: 2, description: 1.5, body: 1 });
  });

  it('computes idf from the corpus statistics', () => {
    expect(idf(stats, 'disk')).toBeCloseTo(idfOf(3, 2), 12);
    expect(idf(stats, 'crash')).toBeCloseTo(idfOf(3, 1), 12);
    expect(idf(stats, 'absent')).toBeCloseTo(idfOf(3, 0), 12);
  });

  it('matches the formula computed by hand on a 3-document corpus', () => {
    expect(bm25Score(stats, 'a', ['disk', 'full'])).toBeCloseTo(termScore(2, 3, avgdl, 3, 2) + termScore(1, 3, avgdl, 3, 1), 12);
    expect(bm25Score(stats, 'b', ['disk', 'full'])).toBeCloseTo(termScore(1, 2, avgdl, 3, 2), 12);
    expect(bm25Score(stats, 'c', ['disk', 'full'])).toBe(0);
    expect(bm25Score(stats, 'c', ['pod'])).toBeCloseTo(termScore(2, 4, avgdl, 3, 1), 12);
  });

  it('counts a repeated query term once and scores an unknown id 0', () => {
    expect(bm25Score(stats, 'a', ['disk', 'disk', 'full'])).toBe(bm25Score(stats, 'a', ['disk', 'full']));
    expect(bm25Score(stats, 'zzz', ['disk'])).toBe(0);
  });

  it('multiplies a term by its query weight; weight 0 drops it, absent means 1', () => {
    const w = new Map([
      ['disk', 2.5],
      ['full', 0],
    ]);
    expect(bm25Score(stats, 'a', ['disk', 'full'], w)).toBeCloseTo(2.5 * termScore(2, 3, avgdl, 3, 2), 12);
    expect(bm25Score(stats, 'a', ['disk', 'full'], new Map())).toBe(bm25Score(stats, 'a', ['disk', 'full']));
  });

  it('normalises each field by its own average length, then weights it (title 3, alerts 4)', () => {
    const weighted = buildBm25Stats([
      { id: 't', fields: { title: ['disk'], body: ['full'] } },
      { id: 'u', fields: { alerts: ['disk'], body: ['slow', 'io'] } },
      { id: 'v', fields: { body: ['disk', 'pod'] } },
    ]);
    // avg lengths: title 1/3, alerts 1/3, body 5/3.
    expect(weighted.avgFieldLength).toMatchObject({ title: 1 / 3, alerts: 1 / 3, body: 5 / 3 });
    const norm = (len: number, avg: number): number => 1 - b + (b * len) / avg;
    const sat = (tf: number): number => (idfOf(3, 3) * tf * (k1 + 1)) / (tf + k1);
    expect(bm25Score(weighted, 't', ['disk'])).toBeCloseTo(sat(3 / norm(1, 1 / 3)), 12);
    expect(bm25Score(weighted, 'u', ['disk'])).toBeCloseTo(sat(4 / norm(1, 1 / 3)), 12);
    expect(bm25Score(weighted, 'v', ['disk'])).toBeCloseTo(sat(1 / norm(2, 5 / 3)), 12);
    expect(bm25Score(weighted, 'u', ['disk'])).toBeGreaterThan(bm25Score(weighted, 't', ['disk']));
  });

  it('does not penalise an entry for having more fields', () => {
    const s = buildBm25Stats([
      { id: 'rich', fields: { title: ['disk', 'full'], alerts: ['nodefilesystemfull'], tags: ['disk', 'storage'], body: ['check', 'df'] } },
      { id: 'bare', fields: { title: ['disk', 'full'], body: ['old', 'copy'] } },
    ]);
    expect(bm25Score(s, 'rich', ['disk', 'full'])).toBeGreaterThan(bm25Score(s, 'bare', ['disk', 'full']));
  });

  it('takes custom weights and parameters', () => {
    const custom = buildBm25Stats(docs, { k1: 2, b: 0, weights: { ...DEFAULT_BM25_PARAMS.weights, body: 2 } });
    // b = 0: no length normalisation; body weight 2 doubles tf.
    const expected = (idfOf(3, 2) * 4 * 3) / (4 + 2);
    expect(bm25Score(custom, 'a', ['disk'])).toBeCloseTo(expected, 12);
  });

  it('handles an empty corpus', () => {
    const empty = buildBm25Stats([]);
    expect(empty.avgFieldLength.body).toBe(0);
    expect(bm25Score(empty, 'a', ['x'])).toBe(0);
  });
});
