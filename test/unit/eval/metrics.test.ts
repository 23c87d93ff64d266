import { describe, expect, it } from 'vitest';
import { fmt, metricsByVariant, variantMetrics, type CaseOutcome } from '../../../src/core/eval/metrics.js';

const o = (id: string, expected: string | null, fired: string | null, ranked: string[], variant = 'v'): CaseOutcome => ({
  id, variant, expected, fired, confidence: fired ? 0.8 : null, ranked,
});

const outcomes: CaseOutcome[] = [
  o('hit', 'a', 'a', ['a', 'b']), //            rank 1, fired correct
  o('wrong', 'b', 'a', ['a', 'c', 'b']), //     rank 3, fired wrong
  o('deep', 'c', null, ['x', 'y', 'z', 'c']), // rank 4: outside @3, counts for MRR
  o('lost', 'd', null, []), //                  never ranked
  o('false-fire', null, 'a', ['a']),
  o('quiet', null, null, ['a']),
];

describe('variantMetrics', () => {
  const m = variantMetrics('v', outcomes);

  it('counts cases, positives and negatives', () => {
    expect(m).toMatchObject({ variant: 'v', cases: 6, positives: 4, negatives: 2, fired: 3, correct: 1, wrong: 1, falseFires: 1 });
  });

  it('computes Recall@1, Recall@3 and MRR over positives', () => {
    expect(m.recallAt1).toBeCloseTo(1 / 4);
    expect(m.recallAt3).toBeCloseTo(2 / 4);
    expect(m.mrr).toBeCloseTo((1 + 1 / 3 + 1 / 4 + 0) / 4);
  });

  it('computes fire rate, precision, coverage and false-fire rate', () => {
    expect(m.fireRate).toBeCloseTo(3 / 6);
    expect(m.precision).toBeCloseTo(1 / 2);
    expect(m.coverage).toBeCloseTo(2 / 4);
    expect(m.falseFireRate).toBeCloseTo(1 / 2);
  });

  it('is NaN (shown as —) where a ratio has no denominator', () => {
    const none = variantMetrics('empty', []);
    expect(none.cases).toBe(0);
    expect(Number.isNaN(none.recallAt1)).toBe(true);
    expect(Number.isNaN(none.fireRate)).toBe(true);
    const onlyNegatives = variantMetrics('neg', [o('n', null, null, [])]);
    expect(Number.isNaN(onlyNegatives.precision)).toBe(true);
    expect(Number.isNaN(onlyNegatives.coverage)).toBe(true);
    expect(onlyNegatives.falseFireRate).toBe(0);
    expect(fmt(Number.NaN)).toBe('—');
    expect(fmt(2 / 3)).toBe('0.667');
    expect(fmt(1)).toBe('1.000');
  });

  it('gives precision 1 and coverage 1 on a perfect run', () => {
    const perfect = variantMetrics('p', [o('1', 'a', 'a', ['a']), o('2', 'b', 'b', ['b', 'a']), o('3', null, null, [])]);
    expect(perfect).toMatchObject({ recallAt1: 1, recallAt3: 1, mrr: 1, precision: 1, coverage: 1, falseFireRate: 0 });
  });
});

describe('metricsByVariant', () => {
  it('groups by variant in order of first appearance', () => {
    const ms = metricsByVariant([o('1', 'a', 'a', ['a'], 'name-hidden'), o('2', 'a', null, [], 'name-visible'), o('3', 'a', 'b', ['b', 'a'], 'name-hidden')]);
    expect(ms.map((m) => [m.variant, m.cases])).toEqual([['name-hidden', 2], ['name-visible', 1]]);
    expect(ms[0]).toMatchObject({ correct: 1, wrong: 1, recallAt1: 0.5, recallAt3: 1 });
    expect(ms[1]).toMatchObject({ fired: 0, coverage: 0, recallAt1: 0 });
  });
});

describe('pointer families', () => {
  it('counts an answer from the expected page\'s pointer family as correct, and says how many', () => {
    const m = variantMetrics('v', [
      { ...o('pointer', 'p', 't', ['t', 'p']), accepted: ['t'] },
      o('strict', 'p', 't', ['t', 'p']),
    ]);
    expect(m).toMatchObject({ correct: 1, wrong: 1, viaPointer: 1 });
    expect(m.recallAt1).toBe(0.5);
  });
});
