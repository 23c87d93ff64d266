import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/core/eval/prng.js';
import { ruleOf, withLeaveOneOut, type EvalCase } from '../../../src/core/eval/eval-cases.js';
import { ruleFolds, runbookFolds } from '../../../src/core/eval/folds.js';

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

describe('runbookFolds', () => {
  const cases = corpusLike(56, 334);
  const foldsOf = (folds: number[], key: (c: EvalCase) => string | null): Map<string, Set<number>> => {
    const m = new Map<string, Set<number>>();
    cases.forEach((c, i) => {
      const k = key(c);
      if (k === null) return;
      m.set(k, (m.get(k) ?? new Set()).add(folds[i]!));
    });
    return m;
  };
  const runbookOf = (c: EvalCase): string | null => c.expect.runbook ?? c.remove ?? null;

  it('keeps every case of one runbook in one fold: all its rules, variants and leave-one-out twins', () => {
    const folds = runbookFolds(cases, 5, createRng(1));
    const byRunbook = foldsOf(folds, runbookOf);
    expect(byRunbook.size).toBe(7);
    expect([...byRunbook.values()].every((s) => s.size === 1)).toBe(true);
    // The by-rule split does not: rules of one runbook land in different folds.
    const byRule = foldsOf(ruleFolds(cases, 5, createRng(1)), runbookOf);
    expect([...byRule.values()].some((s) => s.size > 1)).toBe(true);
  });

  it('treats a pointer page and the runbook it points at as one runbook', () => {
    const family = (id: string): string => (id === 'r/1.md' ? 'r/0.md' : id);
    const folds = runbookFolds(cases, 5, createRng(1), family);
    const byFamily = foldsOf(folds, (c) => {
      const r = runbookOf(c);
      return r === null ? null : family(r);
    });
    expect([...byFamily.values()].every((s) => s.size === 1)).toBe(true);
    expect(byFamily.size).toBe(6);
  });

  it('spreads the negatives evenly and balances runbooks by rules', () => {
    const folds = runbookFolds(cases, 5, createRng(2));
    const count = (pred: (c: EvalCase) => boolean): number[] => {
      const n = [0, 0, 0, 0, 0];
      cases.forEach((c, i) => {
        if (pred(c)) n[folds[i]!]!++;
      });
      return n;
    };
    const neg = count((c) => c.variant === 'name-visible' && c.expect.none === true);
    expect(Math.max(...neg) - Math.min(...neg)).toBeLessThanOrEqual(1);
    // 7 runbooks of 8 rules each over 5 folds: the two emptiest folds hold none, none holds three.
    const pos = count((c) => c.variant === 'name-visible' && !c.expect.none);
    expect(pos.reduce((a, b) => a + b, 0)).toBe(56);
    expect(Math.max(...pos)).toBeLessThanOrEqual(16);
  });

  it('is deterministic for a seed, differs across seeds and ignores case order', () => {
    expect(runbookFolds(cases, 5, createRng(7))).toEqual(runbookFolds(cases, 5, createRng(7)));
    expect(runbookFolds(cases, 5, createRng(7))).not.toEqual(runbookFolds(cases, 5, createRng(8)));
    expect(runbookFolds([...cases].reverse(), 5, createRng(3)).reverse()).toEqual(runbookFolds(cases, 5, createRng(3)));
    expect(() => runbookFolds(cases, 1, createRng(1))).toThrow(RangeError);
  });
});
