/**
 * Recall evaluation metrics (issue: prove recall on real runbooks). Pure: the runner feeds one
 * CaseOutcome per case; everything printed or plotted is computed here.
 */

export interface CaseOutcome {
  id: string;
  variant: string;
  /** Expected entry id, or null when no entry should answer (`none`). */
  expected: string | null;
  /** Entry recall answered with (runbook or incident), or null. */
  fired: string | null;
  confidence: number | null;
  ranked: string[];
  /**
   * Other entries that answer the case as well as `expected`: the pages of its pointer family
   * (a `NodeRAIDDiskFailure.md` that says only "see NodeRAIDDegraded"). Absent: only `expected`.
   */
  accepted?: readonly string[];
  /**
   * Related runbooks answered with `fired` when the alert did not say which one it is ("one of
   * N related runbooks", issue 33). The answer is right when the expected runbook is among them.
   */
  related?: readonly string[];
}

export interface VariantMetrics {
  variant: string;
  cases: number;
  positives: number;
  negatives: number;
  recallAt1: number;
  recallAt3: number;
  mrr: number;
  fireRate: number;
  /** Correct fired answers / fired answers on positive cases (NaN when none fired). */
  precision: number;
  /** Positives answered / positives. */
  coverage: number;
  /** Negatives answered (by anything) / negatives. */
  falseFireRate: number;
  fired: number;
  correct: number;
  wrong: number;
  falseFires: number;
  /** Correct answers that named a pointer-family page rather than `expected` itself. */
  viaPointer: number;
  /** Answers given as one of N related runbooks (right or wrong), and how many of them were right. */
  related: number;
  relatedCorrect: number;
}

const ratio = (a: number, b: number): number => (b === 0 ? Number.NaN : a / b);

/** Aggregates outcomes of one variant. */
export function variantMetrics(variant: string, outcomes: readonly CaseOutcome[]): VariantMetrics {
  let positives = 0;
  let negatives = 0;
  let at1 = 0;
  let at3 = 0;
  let rr = 0;
  let fired = 0;
  let correct = 0;
  let wrong = 0;
  let falseFires = 0;
  let viaPointer = 0;
  let related = 0;
  let relatedCorrect = 0;
  for (const o of outcomes) {
    if (o.fired) fired++;
    if (o.expected === null) {
      negatives++;
      if (o.fired) falseFires++;
      continue;
    }
    positives++;
    const ok = [o.expected, ...(o.accepted ?? [])];
    const ranks = ok.map((e) => o.ranked.indexOf(e)).filter((r) => r >= 0);
    const rank = ranks.length > 0 ? Math.min(...ranks) : -1;
    if (rank === 0) at1++;
    if (rank >= 0 && rank < 3) at3++;
    if (rank >= 0) rr += 1 / (rank + 1);
    const group = o.related ?? [];
    if (o.fired !== null && group.length > 0) related++;
    if (o.fired !== null && ok.includes(o.fired)) {
      correct++;
      if (o.fired !== o.expected) viaPointer++;
      if (group.length > 0) relatedCorrect++;
    } else if (o.fired !== null && group.some((g) => ok.includes(g))) {
      correct++;
      relatedCorrect++;
    } else if (o.fired) wrong++;
  }
  return {
    variant,
    cases: outcomes.length,
    positives,
    negatives,
    recallAt1: ratio(at1, positives),
    recallAt3: ratio(at3, positives),
    mrr: ratio(rr, positives),
    fireRate: ratio(fired, outcomes.length),
    precision: ratio(correct, correct + wrong),
    coverage: ratio(correct + wrong, positives),
    falseFireRate: ratio(falseFires, negatives),
    fired,
    correct,
    wrong,
    falseFires,
    viaPointer,
    related,
    relatedCorrect,
  };
}

/** Groups outcomes by variant (stable order of first appearance) and computes each. */
export function metricsByVariant(outcomes: readonly CaseOutcome[]): VariantMetrics[] {
  const groups = new Map<string, CaseOutcome[]>();
  for (const o of outcomes) {
    const g = groups.get(o.variant);
    if (g) g.push(o);
    else groups.set(o.variant, [o]);
  }
  return [...groups].map(([v, os]) => variantMetrics(v, os));
}

export interface SweepPoint {
  /** The swept setting, e.g. a margin_gap value. */
  setting: number;
  precision: number;
  coverage: number;
  falseFireRate: number;
}

/** Formats a metric for tables: 3 decimals, or "—" when undefined. */
export function fmt(n: number): string {
  return Number.isFinite(n) ? n.toFixed(3) : '—';
}
