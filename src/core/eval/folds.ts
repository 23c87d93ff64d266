import { expectedEntry, ruleOf, type EvalCase } from './eval-cases.js';

/**
 * Assigns each case to one of `k` folds so that all cases of one alert rule share a fold
 * (`ruleOf`) and every fold gets a near-equal share of the rules that have a runbook (and of
 * those that do not). `random` is a seeded uniform generator: the same seed, the same folds.
 * Returns the fold index of each case, in input order.
 */
export function ruleFolds(cases: readonly EvalCase[], k: number, random: () => number): number[] {
  if (!Number.isInteger(k) || k < 2) throw new RangeError(`need at least 2 folds, got ${k}`);
  const rules = new Map<string, boolean>();
  for (const c of cases) {
    const rule = ruleOf(c.id);
    rules.set(rule, (rules.get(rule) ?? false) || expectedEntry(c) !== null);
  }
  const positive = shuffle([...rules].filter(([, p]) => p).map(([r]) => r).sort(), random);
  const negative = shuffle([...rules].filter(([, p]) => !p).map(([r]) => r).sort(), random);
  const foldOf = new Map<string, number>();
  // Deal positives round-robin, then continue with negatives from where they stopped, so
  // fold sizes differ by at most one rule.
  [...positive, ...negative].forEach((r, i) => foldOf.set(r, i % k));
  return cases.map((c) => foldOf.get(ruleOf(c.id))!);
}

/** Fisher–Yates with the given generator; returns the same (shuffled) array. */
function shuffle<T>(xs: T[], random: () => number): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [xs[i], xs[j]] = [xs[j]!, xs[i]!];
  }
  return xs;
}
