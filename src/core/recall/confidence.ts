import type { Entry, StructuralTier } from '../types.js';
import type { QueryWeights } from './build-query.js';

/** Recall thresholds (config `recall.*`; documented in the config schema). */
export interface RecallOptions {
  k: number;
  minScore: number;
  marginGap: number;
  soloFloor: number;
  outcomeFloor: number;
  maxFallbacks: number;
  confidenceCap: number;
  staleAfterMs: number;
  staleFactor: number;
  scopelessFactor: number;
  /** Score multiplier per unit of alert-name coverage: score × (1 + nameBoost × covered share). */
  nameBoost: number;
  /** How much each part of the alert counts in the text query. */
  query: QueryWeights;
  /**
   * Sibling rule: two candidates whose names share at least this share of the longer name's
   * words are near-siblings, judged on the words that tell them apart (above 1 = off).
   */
  siblingOverlap: number;
  /** Sibling rule: a near-sibling scoring at least (1 − this) × the top score is a leading one. */
  siblingWindow: number;
  /** Cap on an instant recall whose confirm step could not run (SPEC §6: 0.70). */
  unconfirmedCap: number;
  /** Whether read-only live-state tools are configured for the confirm backstop. */
  liveStateTools: boolean;
}

/**
 * How much each structural tier vouches for a match. An exact resource match or an explicit
 * runbook_url is the strongest; a runbook matched by content alone (no alert listing) weaker.
 */
const TIER_WEIGHT: Record<StructuralTier, number> = {
  exact: 1,
  runbook_url: 1,
  namespace: 0.85,
  runbook: 0.95,
  scopeless: 1,
};
const BY_CONTENT_WEIGHT = 0.85;

export interface ConfidenceInput {
  score: number;
  margin: number;
  solo: boolean;
  tier: StructuralTier;
  byName: boolean;
  factor: number;
  entry: Entry;
  now: Date;
}

/**
 * Confidence is derived, never asserted: f(score, margin, tier) × outcome factor, one staleness
 * step past `stale_after`, capped (SPEC §6). A margin twice the gap (or a solo score twice the
 * floor) saturates the evidence term; just clearing the gate gives 0.8 of it.
 */
export function deriveConfidence(i: ConfidenceInput, o: RecallOptions): number {
  const rel = i.solo ? i.score / Math.max(o.soloFloor, 1e-9) : i.margin / Math.max(o.marginGap, 1e-9);
  const evidence = Math.min(1, 0.6 + 0.2 * rel);
  let tier = TIER_WEIGHT[i.tier];
  if (i.tier === 'scopeless') tier *= o.scopelessFactor;
  if ((i.tier === 'runbook' || i.tier === 'scopeless') && !i.byName) tier *= BY_CONTENT_WEIGHT;
  let c = tier * evidence * i.factor;
  if (isStale(i.entry, i.now, o.staleAfterMs)) c *= o.staleFactor;
  return Math.round(Math.min(o.confidenceCap, c) * 100) / 100;
}

/**
 * An entry is stale when neither `last_validated` nor `timestamp` is within `stale_after` —
 * nor, when given, `servedSince` (when this bot first served it: an entry installed today is
 * not stale today, whatever date it was written on). With no date at all it is not stale.
 */
export function isStale(entry: Entry, now: Date, staleAfterMs: number, servedSince?: string): boolean {
  if (staleAfterMs <= 0) return false;
  const refs = [entry.lastValidated ?? entry.timestamp, servedSince].map((r) => (r ? Date.parse(r) : NaN)).filter((t) => !Number.isNaN(t));
  if (refs.length === 0) return false;
  return now.getTime() - Math.max(...refs) > staleAfterMs;
}
