/**
 * Gate 2 without a model (SPEC §6): the margin gate, and its sibling rule for runbooks whose
 * names nearly match (issue 22).
 */
import type { Candidate, Incident, StructuralTier } from '../types.js';
import type { CatalogSnapshot } from './catalog-snapshot.js';
import type { RecallOptions } from './confidence.js';
import { judgeSibling, nameDiff, nameWeight, type SiblingJudgement, type WordWeight } from './siblings.js';

/** A candidate that passed the structural gate, with its tier. */
export interface Agreeing {
  cand: Candidate;
  tier: StructuralTier;
  byName: boolean;
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

export interface MarginVerdict {
  passed: boolean;
  value: number;
  threshold: number;
  margin: number;
  reason: string;
}

/**
 * Gate 2 without a model: the top agreeing hit clears `min_score` and beats the runner-up by
 * `margin_gap` (a fraction of the top score), or clears `solo_floor` when nothing else agrees. Scopeless matches must clear
 * the solo floor as well as the margin (SPEC §6).
 */
export function marginGate(top: Agreeing, runnerUp: Agreeing | undefined, opts: RecallOptions): MarginVerdict {
  const score = top.cand.score;
  if (score < opts.minScore) {
    return { passed: false, value: score, threshold: opts.minScore, margin: 0, reason: `score ${round(score)} below min_score ${opts.minScore}` };
  }
  if (top.tier === 'scopeless' && score < opts.soloFloor) {
    return {
      passed: false,
      value: score,
      threshold: opts.soloFloor,
      margin: 0,
      reason: `workload-less match at ${round(score)}, below solo_floor ${opts.soloFloor}`,
    };
  }
  if (runnerUp === undefined) {
    const passed = score >= opts.soloFloor;
    return {
      passed,
      value: score,
      threshold: opts.soloFloor,
      margin: score,
      reason: passed ? `alone at ${round(score)} ≥ solo_floor` : `alone at ${round(score)}, below solo_floor ${opts.soloFloor}`,
    };
  }
  // Relative lead: BM25 magnitudes grow with query length and catalog size, the share of the
  // top score by which it beats the runner-up does not (calibrated in eval/README.md).
  const margin = (score - runnerUp.cand.score) / score;
  const passed = margin >= opts.marginGap;
  const pct = (x: number): string => `${Math.round(x * 100)}%`;
  return {
    passed,
    value: margin,
    threshold: opts.marginGap,
    margin,
    reason: passed
      ? `ahead of ${runnerUp.cand.entry.id} by ${pct(margin)} of its score`
      : `only ${pct(margin)} ahead of ${runnerUp.cand.entry.id} (needs ${pct(opts.marginGap)})`,
  };
}

/**
 * The sibling rule of the margin gate (issue 22): every agreeing rival of the top candidate
 * whose name is a near-sibling of its name (`siblingOverlap`) and whose score is within
 * `siblingWindow` of the top is judged on the words that tell the two names apart
 * (`judgeSibling`). Any refusal makes the top a near miss; siblings told apart drop out of
 * the margin comparison. Siblings are looked for only among the leading candidates, best
 * first, so the usual recall (no near-sibling close by) does no extra work.
 */
export function siblingGate(
  top: Agreeing,
  rivals: readonly Agreeing[],
  incident: Incident,
  catalog: Pick<CatalogSnapshot, 'nameFrequency' | 'entries'>,
  opts: RecallOptions,
): { judged: SiblingJudgement[] } | null {
  if (opts.siblingOverlap > 1) return null;
  const floor = (1 - opts.siblingWindow) * top.cand.score;
  const judged: SiblingJudgement[] = [];
  let weight: WordWeight | undefined;
  for (const r of rivals) {
    if (r.cand.score < floor) break;
    const diff = nameDiff(top.cand.entry, r.cand.entry);
    if (diff === null || !(diff.overlap >= opts.siblingOverlap)) continue;
    weight ??= nameWeight(catalog.nameFrequency, catalog.entries.length);
    judged.push(judgeSibling(top.cand.entry, r.cand.entry, diff, incident, weight, opts.query.exprMaxTerms));
  }
  return judged.length > 0 ? { judged } : null;
}
