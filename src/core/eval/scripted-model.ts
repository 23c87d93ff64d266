/**
 * A scripted model for `reprise eval investigate` without an endpoint: it answers each prompt
 * kind (rerank, verify, investigate) from its own queue, and reports usage as the prompt's
 * characters / 4 so budgets and cost stay exercised. Deterministic: it measures the harness
 * and the engine's control flow, not a model.
 */
import type { ChatRequest, ChatResponse, ModelPort } from '../../ports/model.js';
import { ModelError } from '../../ports/model.js';
import { INVESTIGATE_SYSTEM, RERANK_SYSTEM, VERIFY_SYSTEM } from '../investigate/prompts.js';

/** One scripted turn: text, or tool calls with their arguments. */
export interface ScriptedTurn {
  content?: string | Record<string, unknown>;
  toolCalls?: Array<{ name: string; arguments: Record<string, unknown> }>;
}

export type ScriptKind = 'rerank' | 'verify' | 'investigate';
export type Script = Partial<Record<ScriptKind, ScriptedTurn[]>>;

export function promptKind(req: ChatRequest): ScriptKind | 'other' {
  const sys = req.messages.find((m) => m.role === 'system')?.content;
  return sys === RERANK_SYSTEM ? 'rerank' : sys === VERIFY_SYSTEM ? 'verify' : sys === INVESTIGATE_SYSTEM ? 'investigate' : 'other';
}

export function scriptedModel(name: string, script: Script): ModelPort {
  const queues: Script = structuredClone(script);
  let n = 0;
  return {
    name,
    async chat(req: ChatRequest): Promise<ChatResponse> {
      const kind = promptKind(req);
      // A repair prompt continues the same conversation: it is answered from the same queue.
      const turn = kind === 'other' ? undefined : queues[kind]?.shift();
      if (!turn) throw new ModelError('http', `scripted model has no ${kind} turn left`, { status: 500 });
      const chars = req.messages.reduce((s, m) => s + (m.content?.length ?? 0), 0) + JSON.stringify(req.tools ?? []).length;
      const content = turn.content === undefined ? null : typeof turn.content === 'string' ? turn.content : JSON.stringify(turn.content);
      return {
        content,
        toolCalls: (turn.toolCalls ?? []).map((t) => ({ id: `s${++n}`, name: t.name, arguments: JSON.stringify(t.arguments) })),
        usage: { input: Math.ceil(chars / 4), output: Math.ceil((content?.length ?? 40) / 4) },
        model: name,
        finishReason: turn.toolCalls?.length ? 'tool_calls' : 'stop',
      };
    },
  };
}
