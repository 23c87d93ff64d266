/**
 * The investigation loop: our own tool-calling loop, no agent framework (SPEC §7). Each turn
 * is checked against the budgets first; malformed output gets one repair prompt, then the
 * fallback model, then the run is degraded; a turn without usage fails the run.
 */
import type { ChatMessage, ModelError, ModelPort, ModelSet, ToolCallRequest } from '../../ports/model.js';
import type { Incident } from '../types.js';
import type { Breach, RunBudget } from './budget.js';
import { parseModelFinding, type ModelFinding } from './finding.js';
import { callModel, type CallContext } from './model-call.js';
import { LAST_TURN_TEXT, repairMessage } from './prompts.js';
import type { Toolbox } from './toolbox.js';
import { reasonText } from './toolbox.js';

export interface LoopDeps {
  models: ModelSet;
  toolbox: Toolbox;
  budget: RunBudget;
  ctx: CallContext;
  maxSteps: number;
  maxOutputTokens: number;
  /** Filled as the run goes, so a run stopped by an abort still says what it checked. */
  progress: LoopProgress;
}

export interface LoopProgress {
  /** `tool {args}: outcome — what it showed` per call made, for a partial Finding and prior_findings. */
  checked: string[];
  /** Tool outputs gathered (capped), for the fresh verify. */
  outputs: Array<{ tool: string; text: string }>;
}

export type LoopEnd =
  | { kind: 'finding'; finding: ModelFinding; model: string; forced: boolean }
  | { kind: 'exhausted'; breach: Breach }
  | { kind: 'degraded'; reason: 'model_error' | 'malformed'; detail: string }
  | { kind: 'failed'; reason: 'no_usage'; detail: string };

export interface LoopResult {
  end: LoopEnd;
  model: string;
}

function parseArgs(raw: string): Record<string, unknown> | string {
  try {
    const v: unknown = JSON.parse(raw === '' ? '{}' : raw);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : 'arguments must be a JSON object';
  } catch (err) {
    return `arguments are not valid JSON (${reasonText(err)})`;
  }
}

/**
 * Runs turns until the model answers with a valid Finding or a budget, an error or malformed
 * output ends it. Rethrows when the run's signal aborts (cancel, wall time): the caller
 * decides which it was.
 */
export async function runLoop(incident: Incident, start: readonly ChatMessage[], d: LoopDeps): Promise<LoopResult> {
  const { budget, ctx, toolbox } = d;
  const messages: ChatMessage[] = [...start];
  const { checked, outputs } = d.progress;
  let model: ModelPort = d.models.main;
  let onFallback = false;
  let streak = 0;
  const done = (end: LoopEnd): LoopResult => ({ end, model: model.name });
  const toFallback = async (why: string): Promise<boolean> => {
    if (onFallback || !d.models.fallback) return false;
    onFallback = true;
    model = d.models.fallback;
    await ctx.rec.note('fallback', `switching to fallback model ${model.name}: ${why}`);
    return true;
  };
  /** One more malformed turn: repair, then fallback, then give up. */
  const malformed = async (detail: string): Promise<LoopEnd | null> => {
    streak++;
    if (streak === 1) {
      await ctx.rec.note('repair', `malformed model output (${detail}); asking once to repair`);
      return null;
    }
    if (streak === 2 && (await toFallback(`still malformed after a repair (${detail})`))) return null;
    return {
      kind: 'degraded',
      reason: 'malformed',
      detail: `model output still malformed after a repair${onFallback ? ' and the fallback model' : ''}: ${detail}`,
    };
  };

  for (;;) {
    const breach = budget.breach();
    if (breach) return done({ kind: 'exhausted', breach });
    const last = budget.turns === d.maxSteps - 1;
    const specs = toolbox.specs();
    const maxOut = Math.max(1, Math.min(d.maxOutputTokens, budget.remainingTokens()));
    budget.turns++;
    let res;
    try {
      res = await callModel(
        model,
        {
          messages: last ? [...messages, { role: 'user', content: LAST_TURN_TEXT }] : messages,
          ...(last || specs.length === 0 ? {} : { tools: specs }),
          purpose: 'investigate',
          maxOutputTokens: maxOut,
        },
        ctx,
        (r) =>
          r.toolCalls.length > 0
            ? r.toolCalls.every((t) => typeof parseArgs(t.arguments) !== 'string')
              ? 'ok'
              : 'malformed'
            : parseModelFinding(r.content).ok
              ? 'ok'
              : 'malformed',
      );
    } catch (err) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const e = err as ModelError;
      if (e.code === 'no_usage')
        return done({ kind: 'failed', reason: 'no_usage', detail: `a model turn came back without token usage, so the run cannot be budgeted (${e.message})` });
      if (await toFallback(e.message)) {
        budget.turns--; // the failed call spent nothing; the budget counts answered turns
        continue;
      }
      return done({ kind: 'degraded', reason: 'model_error', detail: `the model could not be reached: ${e.message}` });
    }

    if (res.toolCalls.length > 0 && !last) {
      messages.push({ role: 'assistant', content: res.content, toolCalls: res.toolCalls });
      const parsed = res.toolCalls.map((tc: ToolCallRequest) => ({ tc, args: parseArgs(tc.arguments) }));
      const bad = parsed.filter((p) => typeof p.args === 'string');
      if (bad.length > 0) {
        for (const p of parsed) {
          const why = typeof p.args === 'string' ? `not executed: ${p.args}` : 'not executed: another call of this turn was malformed; call it again';
          messages.push({ role: 'tool', toolCallId: p.tc.id, content: why });
        }
        const end = await malformed(`tool call ${bad.map((b) => b.tc.name).join(', ')}: ${bad[0]!.args as string}`);
        if (end) return done(end);
        continue;
      }
      streak = 0;
      for (const p of parsed) {
        const wall = budget.breach();
        if (wall?.reason === 'wall_time') return done({ kind: 'exhausted', breach: wall });
        const out = await toolbox.call(p.tc.name, p.args as Record<string, unknown>, incident, ctx.signal, ctx.rec);
        messages.push({ role: 'tool', toolCallId: p.tc.id, content: out.content });
        // What was checked and what it showed: kept for a partial Finding and for prior_findings.
        const shown = out.outcome === 'ok' ? ` — ${out.output.replace(/\s+/g, ' ').slice(0, 160)}` : '';
        checked.push(`${p.tc.name} ${JSON.stringify(p.args)}: ${out.outcome}${shown}`);
        if (out.outcome === 'ok') outputs.push({ tool: p.tc.name, text: out.output });
      }
      continue;
    }

    const parsed = parseModelFinding(res.content);
    if (parsed.ok) return done({ kind: 'finding', finding: parsed.value, model: model.name, forced: last });
    if (res.finishReason === 'length' && budget.remainingTokens() <= maxOut) {
      return done({ kind: 'exhausted', breach: { reason: 'max_tokens', detail: `the answer was cut at the ${maxOut} tokens left of the budget` } });
    }
    if (last)
      return done({
        kind: 'exhausted',
        breach: {
          reason: 'max_steps',
          detail: `the last of ${d.maxSteps} turns did not conclude (${res.toolCalls.length > 0 ? 'it asked for more tools' : parsed.error})`,
        },
      });
    messages.push({ role: 'assistant', content: res.content ?? '' }, repairMessage(parsed.error));
    const end = await malformed(parsed.error);
    if (end) return done(end);
  }
}
