import { describe, expect, it } from 'vitest';
import { assess, better, calibrate, CALIBRATION_START, FLOORS, roleOf, SEARCH_SPACE, WRONG_FIRE_COST, type Assessment, type Setting } from '../../../src/core/eval/calibrate.js';
import { bestAcrossFolds, spread } from '../../../src/core/eval/cross-validate.js';
import type { CaseOutcome } from '../../../src/core/eval/metrics.js';

const o = (variant: string, expected: string | null, fired: string | null): CaseOutcome => ({ id: `${variant}-${Math.random()}`, variant, expected, fired, confidence: null, ranked: fired ? [fired] : [] });
const times = (n: number, make: () => CaseOutcome): CaseOutcome[] => Array.from({ length: n }, make);

describe('assess', () => {
  it('is feasible when every floor holds and scores hard-variant coverage', () => {
    const outcomes = [
      ...times(50, () => o('name-visible', 'a', 'a')),
      ...times(100, () => o('name-visible', null, null)),
      ...times(20, () => o('leave-one-out', null, null)),
      ...times(8, () => o('name-hidden', 'a', 'a')),
      ...times(2, () => o('name-hidden', 'a', null)),
    ];
    const a = assess(outcomes);
    expect(a.violation).toBe(0);
    expect(a.coverage).toBeCloseTo(0.8);
    expect(a.precision).toBe(1);
    expect(a.cost).toBeCloseTo(0.2); // two silences of ten
  });

  it('holds precision by a floor on every fold, not by trading wrong fires for coverage', () => {
    const base = [...times(50, () => o('name-visible', 'a', 'a')), ...times(100, () => o('name-visible', null, null))];
    const silent = [...base, ...times(90, () => o('name-hidden', 'a', 'a')), ...times(10, () => o('name-hidden', 'a', null))];
    const bolder = [...base, ...times(97, () => o('name-hidden', 'a', 'a')), ...times(3, () => o('name-hidden', 'a', 'b'))];
    // Pooled, 3 wrong runbooks in 100 hold 0.96 precision, and a wrong fire is one miss.
    expect(WRONG_FIRE_COST).toBe(1);
    expect(assess(silent).cost).toBeCloseTo(0.1);
    expect(assess(bolder).cost).toBeCloseTo(0.03);
    expect(assess(bolder).violation).toBe(0);
    // On folds, the 3 wrong fires fall in one of two folds: 0.94 there, below 0.96.
    const folds = (os: CaseOutcome[]) => os.map((x, i) => (x.variant === 'name-hidden' && x.fired === 'b' ? 1 : i % 2));
    const onFolds = assess(bolder, FLOORS, folds(bolder));
    expect(onFolds.violation).toBeGreaterThan(0);
    expect(assess(silent, FLOORS, folds(silent)).violation).toBe(0);
    expect(better(assess(silent, FLOORS, folds(silent)), onFolds)).toBe(true);
  });

  it('charges every floor it misses', () => {
    const outcomes = [
      ...times(9, () => o('name-visible', 'a', 'a')),
      o('name-visible', 'a', 'b'), //                      visible precision 0.9 (< 0.99)
      ...times(9, () => o('name-visible', null, null)),
      o('name-visible', null, 'a'), //                      false-fire 0.1 (> 0.01)
      ...times(8, () => o('leave-one-out', null, null)),
      ...times(2, () => o('leave-one-out', null, 'a')), //  loo fire 0.2 (> 0.05)
      ...times(8, () => o('name-hidden+expr', 'a', 'a')),
      ...times(2, () => o('name-hidden+expr', 'a', 'b')), // hard precision 0.8 (< 0.96)
    ];
    expect(assess(outcomes).violation).toBeCloseTo(0.09 + 0.09 + 0.15 + 0.16);
    expect(assess(outcomes, { ...FLOORS, hardPrecision: 0.7 }).violation).toBeCloseTo(0.09 + 0.09 + 0.15);
  });

  it('sorts variants into roles by name', () => {
    expect(roleOf('leave-one-out (name-hidden+expr)')).toBe('hardLoo');
    expect(['name-visible', 'name-visible+expr', 'name-hidden', 'name-hidden+expr', 'leave-one-out'].map(roleOf)).toEqual(['visible', 'visible', 'hard', 'hard', 'loo']);
  });
});

describe('better', () => {
  const a = (violation: number, cost: number, precision: number): Assessment => ({ violation, cost, coverage: 1 - cost, precision, metrics: [] });
  it('prefers fewer floor misses, then less cost, then precision', () => {
    expect(better(a(0, 0.9, 0.5), a(0.01, 0, 1))).toBe(true);
    expect(better(a(0, 0.2, 0.9), a(0, 0.3, 1))).toBe(true);
    expect(better(a(0, 0.2, 1), a(0, 0.2, 0.9))).toBe(true);
    expect(better(a(0, 0.2, 1), a(0, 0.2, 1))).toBe(false);
  });
});

describe('calibrate', () => {
  /**
   * A synthetic landscape: coverage grows as the gap shrinks, but below 0.15 precision falls
   * under the floor unless the summary weighs at least 3 (settings interact).
   */
  const landscape = (s: Setting): Assessment => {
    const coverage = 1 - s.marginGap;
    const precise = s.marginGap >= 0.15 || s.summary >= 3;
    return { violation: precise ? 0 : 0.1, cost: 1 - coverage, coverage, precision: precise ? 1 : 0.8, metrics: [] };
  };

  it('finds the best feasible point of the grid and every setting it tried is in the space', () => {
    const seen: Setting[] = [];
    const r = calibrate((s) => {
      seen.push(s);
      return landscape(s);
    }, { ...CALIBRATION_START });
    expect(r.setting.marginGap).toBe(0.05);
    expect(r.setting.summary).toBeGreaterThanOrEqual(3);
    expect(r.assessment.violation).toBe(0);
    for (const s of seen) for (const [k, v] of Object.entries(s)) expect(SEARCH_SPACE[k as keyof Setting]).toContain(v);
  });

  it('keeps pinned settings where the space allows one value only', () => {
    const r = calibrate(landscape, { ...CALIBRATION_START }, { ...SEARCH_SPACE, summary: [1] });
    expect(r.setting.summary).toBe(1);
    expect(r.setting.marginGap).toBe(0.15);
  });

  it('does not move on a tie, except to the middle of the margin gaps that tie', () => {
    const flat = (): Assessment => ({ violation: 0, cost: 0.5, coverage: 0.5, precision: 1, metrics: [] });
    const gaps = SEARCH_SPACE.marginGap;
    // (A start outside the space begins at the space's first value.)
    expect(calibrate(flat, { ...CALIBRATION_START }).setting).toEqual({ ...CALIBRATION_START, description: SEARCH_SPACE.description[0], marginGap: gaps[Math.floor((gaps.length - 1) / 2)] });
    // Training cases that cannot tell 0.05–0.3 apart (0.35 and up cost silences): 0.15 or 0.2, the middle.
    const plateau = (s: Setting): Assessment => ({ violation: 0, cost: s.marginGap > 0.3 ? 0.6 : 0.5, coverage: 0.5, precision: 1, metrics: [] });
    expect(calibrate(plateau, { ...CALIBRATION_START }).setting.marginGap).toBe(0.15);
  });
});

describe('cross-validation helpers', () => {
  it('spread: mean, sample sd and range, undefined folds left out', () => {
    const s = spread([1, 0.9, Number.NaN, 0.8]);
    expect(s.mean).toBeCloseTo(0.9);
    expect(s.sd).toBeCloseTo(0.1);
    expect([s.min, s.max, s.n]).toEqual([0.8, 1, 3]);
    expect(spread([]).n).toBe(0);
  });

  it('bestAcrossFolds: the choice feasible on most held-out folds, then the least cost', () => {
    const A = { ...CALIBRATION_START, marginGap: 0.1 };
    const B = { ...CALIBRATION_START, marginGap: 0.3 };
    const heldOut = (s: Setting, fold: number): Assessment => s === A
      ? { violation: fold === 0 ? 0.05 : 0, cost: 0.05, coverage: 0.95, precision: 0.96, metrics: [] }
      : { violation: 0, cost: 0.2, coverage: 0.8, precision: 1, metrics: [] };
    expect(bestAcrossFolds([A, B, A], heldOut, 3).setting).toBe(B);
    expect(bestAcrossFolds([A, B, A], (s, f) => ({ ...heldOut(s, f), violation: 0 }), 3).setting).toBe(A);
  });
});
