/**
 * Verify (SPEC §6, §7): an adversarial review of a finding against its evidence that can only
 * lower confidence. The caller decides what a failure means: on the recall path anything but
 * a pass falls through to a full investigation; on the fresh path it only augments.
 */
import { z } from 'zod';
import type { ModelPort } from '../../ports/model.js';
import type { GateTraceStep, Incident } from '../types.js';
import { extractJson, type ModelFinding, type ParseResult } from './finding.js';
import { askJson, type CallContext } from './model-call.js';
import { verifyMessages, type ReviewEvidence } from './prompts.js';

export type VerifyVerdict = 'supported' | 'weakened' | 'rejected' | 'error' | 'unusable' | 'no_usage' | 'aborted';

export interface VerifyOutcome {
  verdict: VerifyVerdict;
  /** True for supported and weakened: the cause stands. */
  passed: boolean;
  /** Confidence before review. */
  before: number;
  /** After review: never above `before`. */
  confidence: number;
  reasons: string[];
}

const answerSchema = z.object({
  verdict: z.enum(['supported', 'weakened', 'rejected']),
  confidence: z.number().min(0).max(1),
  reasons: z.array(z.string()).default([]),
});
type VerifyAnswer = z.infer<typeof answerSchema>;

function parseAnswer(content: string | null): ParseResult<VerifyAnswer> {
  const r = answerSchema.safeParse(extractJson(content));
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, error: 'expected {"verdict": "supported" | "weakened" | "rejected", "confidence": 0..1, "reasons": ["…"]}' };
}

export async function verify(
  incident: Incident,
  finding: Pick<ModelFinding, 'summary' | 'rootCauses' | 'verdict' | 'confidence'>,
  evidence: readonly ReviewEvidence[],
  models: readonly ModelPort[],
  ctx: CallContext,
  origin: string,
  maxOutputTokens = 400,
): Promise<VerifyOutcome> {
  const before = finding.confidence;
  const ans = await askJson(models, verifyMessages(incident, finding, evidence, origin), 'verify', parseAnswer, ctx, maxOutputTokens);
  if (!ans.ok) {
    const verdict: VerifyVerdict = ans.reason === 'malformed' ? 'unusable' : ans.reason === 'model_error' ? 'error' : ans.reason;
    return { verdict, passed: false, before, confidence: before, reasons: [ans.detail] };
  }
  const v = ans.value;
  const confidence = Math.min(before, v.confidence);
  return { verdict: v.verdict, passed: v.verdict !== 'rejected', before, confidence, reasons: v.reasons.slice(0, 5).map((r) => r.slice(0, 300)) };
}

export function verifyTrace(entry: string | null, v: VerifyOutcome): GateTraceStep {
  const r = v.reasons.length ? `: ${v.reasons.join('; ')}` : '';
  return {
    gate: 'verify',
    entry,
    passed: v.passed,
    value: v.verdict,
    threshold: null,
    reason: `verify ${v.verdict}, confidence ${v.before.toFixed(2)} → ${v.confidence.toFixed(2)}${r}`,
  };
}
