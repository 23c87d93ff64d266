/**
 * Rerank (SPEC §6 match gate with a model): one call over the top `rerank_k` structurally
 * agreeing candidates; fires at ≥ `rerank_threshold`. An id it was not offered, "none", a
 * low confidence, an error or an unusable answer is a miss. Skipped below `rerank_min_score`.
 */
import { z } from 'zod';
import type { Clock } from '../../ports/clock.js';
import { systemClock } from '../../ports/clock.js';
import type { ModelPort } from '../../ports/model.js';
import type { Candidate, Entry, GateTraceStep, Incident } from '../types.js';
import { extractJson, type ParseResult } from './finding.js';
import { askJson, emptyTally, type PriceTable, type UsageTally } from './model-call.js';
import { rerankMessages } from './prompts.js';
import { StepRecorder, type Step, type StepSink } from './step.js';

export interface RerankOptions {
  /** How many agreeing candidates the call sees (`recall.rerank_k`). */
  k: number;
  /** Confidence at which it fires (`recall.rerank_threshold`). */
  threshold: number;
  /** Top BM25 score below which the call is skipped (`recall.rerank_min_score`). */
  minScore: number;
  maxOutputTokens?: number;
  prices?: PriceTable;
  signal?: AbortSignal;
  clock?: Clock;
  /** Receives the call's Steps (default: kept on the result only). */
  sink?: StepSink;
  /** Id the Steps carry. */
  run?: string;
  stepCapBytes?: number;
}

export type RerankMiss = 'no_candidates' | 'skipped' | 'none' | 'not_offered' | 'low_confidence' | 'error' | 'unusable' | 'no_usage';

export type RerankResult =
  | { hit: true; entry: Entry; confidence: number; reason: string; trace: GateTraceStep[]; usage: UsageTally; steps: Step[] }
  | { hit: false; miss: RerankMiss; reason: string; trace: GateTraceStep[]; usage: UsageTally; steps: Step[] };

const answerSchema = z.object({ entry: z.string().min(1), confidence: z.number().min(0).max(1), reason: z.string().optional() });
type RerankAnswer = z.infer<typeof answerSchema>;

function parseAnswer(content: string | null): ParseResult<RerankAnswer> {
  const r = answerSchema.safeParse(extractJson(content));
  return r.success ? { ok: true, value: r.data } : { ok: false, error: 'expected {"entry": "<id>" | "none", "confidence": 0..1, "reason": "…"}' };
}

const round = (n: number): number => Math.round(n * 1000) / 1000;

/**
 * @param candidates structurally agreeing candidates, best first (recall's order).
 * @param models the rerank model, then the fallback if any.
 */
export async function rerank(incident: Incident, candidates: readonly Candidate[], models: readonly ModelPort[], opts: RerankOptions): Promise<RerankResult> {
  const rec = new StepRecorder({
    run: opts.run ?? `rerank:${incident.fingerprint}`,
    clock: opts.clock ?? systemClock,
    sink: opts.sink ?? (() => {}),
    capBytes: opts.stepCapBytes ?? 4096,
  });
  const usage = emptyTally();
  const offered = candidates.slice(0, opts.k);
  const top = offered[0];
  const miss = (kind: RerankMiss, entry: string | null, value: number | string | null, reason: string): RerankResult => ({
    hit: false,
    miss: kind,
    reason,
    trace: [{ gate: 'rerank', entry, passed: false, value, threshold: opts.threshold, reason }],
    usage,
    steps: rec.steps,
  });
  if (!top) return miss('no_candidates', null, null, 'no structurally agreeing candidate to rerank');
  if (top.score < opts.minScore)
    return miss('skipped', top.entry.id, round(top.score), `rerank skipped: top score ${round(top.score)} below rerank_min_score ${opts.minScore}`);

  const ctx = { rec, prices: opts.prices ?? {}, tally: usage, signal: opts.signal ?? new AbortController().signal };
  const ans = await askJson(
    models,
    rerankMessages(
      incident,
      offered.map((c) => c.entry),
    ),
    'rerank',
    parseAnswer,
    ctx,
    opts.maxOutputTokens ?? 300,
  );
  if (!ans.ok) {
    const kind: RerankMiss = ans.reason === 'malformed' ? 'unusable' : ans.reason === 'no_usage' ? 'no_usage' : 'error';
    return miss(kind, top.entry.id, null, `rerank ${kind === 'unusable' ? 'answer unusable' : 'failed'}: ${ans.detail}`);
  }
  const { entry: id, confidence } = ans.value;
  if (id.trim().toLowerCase() === 'none')
    return miss('none', null, round(confidence), `rerank: no candidate fits${ans.value.reason ? ` (${ans.value.reason})` : ''}`);
  const chosen = offered.find((c) => c.entry.id === id);
  if (!chosen) return miss('not_offered', id, round(confidence), `rerank named "${id.slice(0, 120)}", which was not offered`);
  if (confidence < opts.threshold)
    return miss('low_confidence', id, round(confidence), `rerank confidence ${round(confidence)} below rerank_threshold ${opts.threshold}`);
  const reason = `rerank chose ${id} at ${round(confidence)} among ${offered.length}${ans.value.reason ? `: ${ans.value.reason}` : ''}`;
  return {
    hit: true,
    entry: chosen.entry,
    confidence,
    reason,
    trace: [{ gate: 'rerank', entry: id, passed: true, value: round(confidence), threshold: opts.threshold, reason }],
    usage,
    steps: rec.steps,
  };
}
