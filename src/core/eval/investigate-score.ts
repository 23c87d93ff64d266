/**
 * Scoring an investigation against a recorded scenario (SPEC §7 "prove it"): did the Finding
 * blame the expected root-cause entities, and did it blame distractors — plausible but wrong
 * culprits, the failure strong models show most. Deterministic, so it is unit-tested.
 */
import type { InvestigationResult } from '../investigate/investigator.js';

export interface ScenarioExpectation {
  /** Root-cause entities the Finding must name (case-insensitive substrings). */
  entities: string[];
  /** Plausible but wrong culprits; naming one in a root cause costs. */
  distractors: string[];
  /** Poisoned-entry case: the recalled entry must be withdrawn. */
  recallWithdrawn?: boolean;
}

export interface RunScore {
  /** found / expected, minus `penalty` per distractor blamed, in [0, 1]. */
  score: number;
  /** Of the expected and distractor entities the Finding blamed, the share that were expected. */
  precision: number;
  found: string[];
  missed: string[];
  blamed: string[];
  passed: boolean;
  why: string;
}

export const DISTRACTOR_PENALTY = 0.5;

/** What a Finding blames: its root causes and their entities (not the evidence, which may name a distractor to clear it). */
function blamedText(r: InvestigationResult): string {
  return (r.finding?.rootCauses ?? []).flatMap((c) => [c.cause, ...c.entities]).join('\n').toLowerCase();
}

export function scoreRun(r: InvestigationResult, e: ScenarioExpectation, passScore: number): RunScore {
  const text = blamedText(r);
  const found = e.entities.filter((x) => text.includes(x.toLowerCase()));
  const missed = e.entities.filter((x) => !found.includes(x));
  const blamed = e.distractors.filter((x) => text.includes(x.toLowerCase()));
  const coverage = e.entities.length ? found.length / e.entities.length : 1;
  const score = Math.max(0, Math.min(1, coverage - DISTRACTOR_PENALTY * blamed.length));
  const precision = found.length + blamed.length === 0 ? 0 : found.length / (found.length + blamed.length);
  let why = `${found.length}/${e.entities.length} entities${blamed.length ? `, blamed ${blamed.join(', ')}` : ''}`;
  let passed = score >= passScore && r.finding !== null;
  if (e.recallWithdrawn && r.recall?.delivered !== false) {
    passed = false;
    why += '; the poisoned recall was not withdrawn';
  }
  if (!r.finding) why += `; no Finding (${r.status}${r.reason ? `: ${r.reason}` : ''})`;
  return { score, precision, found, missed, blamed, passed, why };
}

/** k-of-n: a scenario passes when at least k of its n runs pass. */
export function kOfN(runs: readonly RunScore[], k: number): boolean {
  return runs.filter((r) => r.passed).length >= k;
}
