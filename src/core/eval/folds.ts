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

/**
 * Assigns each case to one of `k` folds so that every case expecting one runbook shares a fold
 * (issue 22): all its rules, their variants and leave-one-out twins, and the pages of its
 * pointer family (`family` maps an entry to the runbook it stands for). A held-out fold's
 * runbooks are then unseen by its calibration, as a catalog's new runbooks are. Runbooks are
 * dealt largest first (by rules) to the fold with the fewest rules so far, ties to the lower
 * fold after a seeded shuffle; rules with no runbook are dealt round-robin on their own, so
 * negatives spread evenly. Returns the fold index of each case, in input order.
 */
export function runbookFolds(cases: readonly EvalCase[], k: number, random: () => number, family: (id: string) => string = (id) => id): number[] {
  if (!Number.isInteger(k) || k < 2) throw new RangeError(`need at least 2 folds, got ${k}`);
  const loo = (c: EvalCase): string | undefined => (c.remove !== undefined && expectedEntry(c) === null ? c.remove : undefined);
  // A rule's group: the runbook its positive cases expect (a leave-one-out twin expects the
  // runbook it removed), else none.
  const groupOfRule = new Map<string, string | null>();
  for (const c of cases) {
    const rule = ruleOf(c.id);
    const expected = expectedEntry(c) ?? loo(c);
    if (expected !== undefined && expected !== null) groupOfRule.set(rule, family(expected));
    else if (!groupOfRule.has(rule)) groupOfRule.set(rule, null);
  }
  const rulesOf = new Map<string, string[]>();
  const negatives: string[] = [];
  for (const [rule, group] of [...groupOfRule].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (group === null) negatives.push(rule);
    else rulesOf.set(group, [...(rulesOf.get(group) ?? []), rule]);
  }
  const groups = shuffle([...rulesOf.keys()].sort(), random);
  // Stable: equal sizes keep their shuffled order.
  groups.sort((a, b) => rulesOf.get(b)!.length - rulesOf.get(a)!.length);
  const load = Array.from({ length: k }, () => 0);
  const foldOf = new Map<string, number>();
  for (const g of groups) {
    const f = load.indexOf(Math.min(...load));
    load[f]! += rulesOf.get(g)!.length;
    for (const r of rulesOf.get(g)!) foldOf.set(r, f);
  }
  shuffle(negatives, random).forEach((r, i) => foldOf.set(r, i % k));
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
