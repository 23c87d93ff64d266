import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/core/eval/prng.js';
import { ruleOf, withLeaveOneOut, type EvalCase } from '../../../src/core/eval/eval-cases.js';
import { ruleFolds } from '../../../src/core/eval/folds.js';

/** The corpus' id scheme: rule-N (visible), rule-N:hidden, rule-N:hidden:expr; negatives alone. */
function corpusLike(positives: number, negatives: number): EvalCase[] {
  const cases: EvalCase[] = [];
  for (let i = 0; i < positives; i++) {
    const expect = { runbook: `r/${i % 7}.md` };
    cases.push({ id: `rule-${i}`, variant: 'name-visible', expect, payload: {} });
    cases.push({ id: `rule-${i}:hidden`, variant: 'name-hidden', expect, payload: {} });
    if (i % 2 === 0) cases.push({ id: `rule-${i}:hidden:expr`, variant: 'name-hidden+expr', expect, payload: {} });
  }
  for (let i = 0; i < negatives; i++) cases.push({ id: `awesome-Neg${i}`, variant: 'name-visible', expect: { none: true }, payload: {} });
  return withLeaveOneOut(cases);
}

describe('ruleOf', () => {
  it('is the id up to the first colon', () => {
    expect(['rule-0003', 'rule-0003:hidden', 'rule-0003:hidden:expr', 'rule-0003:loo'].map(ruleOf)).toEqual(Array(4).fill('rule-0003'));
    expect(ruleOf('awesome-JvmNon-heapMemoryFillingUp-5abd')).toBe('awesome-JvmNon-heapMemoryFillingUp-5abd');
  });
});

describe('ruleFolds', () => {
  const cases = corpusLike(56, 334);

  it('never lets a rule straddle folds (its variants and leave-one-out twin share one)', () => {
    const folds = ruleFolds(cases, 5, createRng(1));
    const foldOfRule = new Map<string, Set<number>>();
    cases.forEach((c, i) => {
      const s = foldOfRule.get(ruleOf(c.id)) ?? new Set();
      s.add(folds[i]!);
      foldOfRule.set(ruleOf(c.id), s);
    });
    expect([...foldOfRule.values()].every((s) => s.size === 1)).toBe(true);
    expect(new Set(folds)).toEqual(new Set([0, 1, 2, 3, 4]));
  });

  it('deals rules with a runbook evenly over the folds, and the rest too', () => {
    const folds = ruleFolds(cases, 5, createRng(1));
    const count = (pred: (c: EvalCase) => boolean): number[] => {
      const n = [0, 0, 0, 0, 0];
      cases.forEach((c, i) => {
        if (pred(c)) n[folds[i]!]!++;
      });
      return n;
    };
    const pos = count((c) => c.variant === 'name-visible' && !c.expect.none);
    const neg = count((c) => c.variant === 'name-visible' && c.expect.none === true);
    expect(Math.max(...pos) - Math.min(...pos)).toBeLessThanOrEqual(1);
    expect(Math.max(...neg) - Math.min(...neg)).toBeLessThanOrEqual(1);
  });

  it('is deterministic for a seed and differs across seeds', () => {
    expect(ruleFolds(cases, 5, createRng(7))).toEqual(ruleFolds(cases, 5, createRng(7)));
    expect(ruleFolds(cases, 5, createRng(7))).not.toEqual(ruleFolds(cases, 5, createRng(8)));
  });

  it('does not depend on the order the cases come in', () => {
    const reversed = [...cases].reverse();
    const a = ruleFolds(cases, 5, createRng(3));
    const b = ruleFolds(reversed, 5, createRng(3)).reverse();
    expect(b).toEqual(a);
  });

  it('needs at least two folds', () => {
    expect(() => ruleFolds(cases, 1, createRng(1))).toThrow(RangeError);
  });
});
