/**
 * The file-time quality bar (SPEC §10): a Finding reaches the knowledge base only when it was
 * verified, is confident, cites evidence and carries provenance — a causing change OR a fixing
 * action (either alone is enough: saturation has no deploy, a fresh problem has no known fix).
 * It runs before dedup, so a finding below it leaves no artifact on the forge at all.
 */
import type { Finding } from '../investigate/finding.js';

export type BarCriterion = 'complete' | 'verified' | 'confidence' | 'evidence' | 'provenance';

export interface BarMiss {
  criterion: BarCriterion;
  /** One sentence naming what is missing. */
  detail: string;
}

export function qualityBar(f: Finding, minConfidence: number): BarMiss | undefined {
  if (f.partial) return { criterion: 'complete', detail: 'the investigation ended before it concluded (partial finding)' };
  if (f.verified !== true)
    return { criterion: 'verified', detail: f.verified === false ? 'the adversarial review rejected the cause' : 'the cause was not verified' };
  if (!(f.confidence >= minConfidence))
    return { criterion: 'confidence', detail: `confidence ${f.confidence.toFixed(2)} is below ${minConfidence.toFixed(2)}` };
  const top = f.rootCauses[0];
  if (!top || top.evidence.length === 0) return { criterion: 'evidence', detail: 'no evidence is cited for the cause' };
  if (!f.changeRef && f.suggestedActions.length === 0) return { criterion: 'provenance', detail: 'neither a causing change nor a fixing action' };
  return undefined;
}
