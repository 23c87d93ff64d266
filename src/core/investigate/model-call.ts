/**
 * One model call as the engine makes it: recorded as a Step with tokens and estimated cost,
 * usage required, errors coded. And the JSON-answer pattern shared by rerank, verify and the
 * final turn: one repair prompt, then the fallback model, then give up with a reason.
 */
import { ModelError, type ChatMessage, type ChatRequest, type ChatResponse, type ModelPort } from '../../ports/model.js';
import type { ParseResult } from './finding.js';
import { repairMessage } from './prompts.js';
import type { StepRecorder } from './step.js';

/** US dollars per million tokens, by model name. */
export type PriceTable = Readonly<Record<string, { input: number; output: number }>>;

/** Tokens and cost so far: per call on the Steps, summed here (SPEC §7 "cost as a fact"). */
export interface UsageTally {
  calls: number;
  input: number;
  output: number;
  /** Sum of priced calls, US dollars. */
  costUsd: number;
  /** Calls whose model had no price: the cost above leaves them out. */
  unpricedCalls: number;
}

export const emptyTally = (): UsageTally => ({ calls: 0, input: 0, output: 0, costUsd: 0, unpricedCalls: 0 });

export function priceOf(prices: PriceTable, model: string, input: number, output: number): number | null {
  const p = prices[model];
  return p ? (input * p.input + output * p.output) / 1_000_000 : null;
}

export interface CallContext {
  rec: StepRecorder;
  prices: PriceTable;
  tally: UsageTally;
  signal: AbortSignal;
  /** Told every call's usage (the run budget). */
  onUsage?: (u: { input: number; output: number }) => void;
}

/**
 * Calls the model once and records the Step. Resolves only with usage; rejects with a
 * {@link ModelError} (after recording it).
 */
export async function callModel(
  model: ModelPort,
  req: Omit<ChatRequest, 'signal'>,
  ctx: CallContext,
  judge?: (r: ChatResponse) => 'ok' | 'malformed',
): Promise<ChatResponse> {
  const started = performance.now();
  try {
    const res = await model.chat({ ...req, signal: ctx.signal });
    const cost = priceOf(ctx.prices, model.name, res.usage.input, res.usage.output);
    ctx.tally.calls++;
    ctx.tally.input += res.usage.input;
    ctx.tally.output += res.usage.output;
    if (cost === null) ctx.tally.unpricedCalls++;
    else ctx.tally.costUsd += cost;
    ctx.onUsage?.(res.usage);
    await ctx.rec.record({
      kind: 'model',
      purpose: req.purpose,
      model: model.name,
      outcome: judge ? judge(res) : 'ok',
      inputTokens: res.usage.input,
      outputTokens: res.usage.output,
      costUsd: cost,
      durationMs: Math.round(performance.now() - started),
      toolCalls: res.toolCalls.map((t) => t.name),
      ...(res.content ? { content: res.content } : {}),
    });
    return res;
  } catch (err) {
    const e =
      err instanceof ModelError
        ? err
        : new ModelError(ctx.signal.aborted ? 'aborted' : 'bad_response', err instanceof Error ? err.message : String(err), { cause: err });
    const outcome = e.code === 'no_usage' ? 'no_usage' : e.code === 'aborted' ? 'aborted' : 'error';
    if (e.code !== 'no_usage') ctx.tally.calls++;
    await ctx.rec.record({
      kind: 'model',
      purpose: req.purpose,
      model: model.name,
      outcome,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: null,
      durationMs: Math.round(performance.now() - started),
      toolCalls: [],
      error: e.message,
    });
    throw e;
  }
}

export type JsonAnswer<T> = { ok: true; value: T; model: string } | { ok: false; reason: 'malformed' | 'model_error' | 'no_usage' | 'aborted'; detail: string };

/**
 * Asks for a JSON answer (no tools). Malformed → one repair prompt on the same model →
 * the fallback model (with the repair conversation) → `malformed`. A model error goes to the
 * fallback at once. A call without usage stops here (`no_usage`): it is never retried.
 */
export async function askJson<T>(
  models: readonly ModelPort[],
  messages: readonly ChatMessage[],
  purpose: ChatRequest['purpose'],
  parse: (content: string | null) => ParseResult<T>,
  ctx: CallContext,
  maxOutputTokens: number,
): Promise<JsonAnswer<T>> {
  let convo = [...messages];
  let last: JsonAnswer<T> = { ok: false, reason: 'model_error', detail: 'no model configured' };
  for (const [i, model] of models.entries()) {
    if (i > 0) await ctx.rec.note('fallback', `${purpose}: trying fallback model ${model.name} after ${last.ok ? '' : last.reason}`);
    const attempts = i === 0 ? 2 : 1;
    for (let a = 0; a < attempts; a++) {
      let res: ChatResponse;
      try {
        res = await callModel(model, { messages: convo, purpose: a === 0 && i === 0 ? purpose : 'repair', maxOutputTokens }, ctx, (r) =>
          parse(r.content).ok ? 'ok' : 'malformed',
        );
      } catch (err) {
        const e = err as ModelError;
        if (e.code === 'aborted' || ctx.signal.aborted) return { ok: false, reason: 'aborted', detail: e.message };
        if (e.code === 'no_usage') return { ok: false, reason: 'no_usage', detail: e.message };
        last = { ok: false, reason: 'model_error', detail: e.message };
        break; // this model is down: next one
      }
      const parsed = parse(res.content);
      if (parsed.ok) return { ok: true, value: parsed.value, model: model.name };
      last = { ok: false, reason: 'malformed', detail: parsed.error };
      convo = [...convo, { role: 'assistant', content: res.content ?? '' }, repairMessage(parsed.error)];
      if (a === 0 && i === 0) await ctx.rec.note('repair', `${purpose}: malformed answer (${parsed.error}); asking once to repair`);
    }
  }
  return last;
}
