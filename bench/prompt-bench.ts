/**
 * Prompt tokens per path, counted with a tokenizer (o200k_base, GPT-4o/4.1's) on the real
 * prompts the engine builds for one incident from the bundled catalog: the recall path
 * (rerank + verify over the confirm output) against a full investigation of the same incident
 * (every turn's request, tools included, replayed with the recorded checkout-oom scenario).
 * Target: recall path ≤ 3,000 tokens.
 */
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { scriptedModel, type Script } from '../src/core/eval/scripted-model.js';
import { recallFinding } from '../src/core/investigate/answers.js';
import { Investigator } from '../src/core/investigate/investigator.js';
import { InMemoryFindingStore, InMemoryTokenMeter } from '../src/core/investigate/memory-stores.js';
import { PROMPT_HASH, rerankMessages, verifyMessages } from '../src/core/investigate/prompts.js';
import { buildQuery } from '../src/core/recall/build-query.js';
import { alertNameContext, structuralGate } from '../src/core/recall/structural.js';
import type { ChatMessage, ChatRequest, ModelPort, ToolSpec } from '../src/ports/model.js';
import { systemClock } from '../src/ports/clock.js';
import { silentLogger } from '../src/ports/logger.js';
import { defaultConfig } from '../src/config/load-config.js';
import { BUILTIN_TOOL_NAMES } from '../src/core/investigate/builtin-tools.js';
import { defaultModelBlock, investigatorOptions } from '../src/runtime/build-investigator.js';
import { BUNDLED_CATALOG, loadSnapshot } from '../src/runtime/open-catalog.js';
import { scenarioIncident, scenarioTools, type Scenario } from '../src/cli/eval-investigate.js';

export const RECALL_PATH_TARGET = 3000;
const SCENARIO = fileURLToPath(new URL('../eval/investigate/checkout-oom.json', import.meta.url));

/** Tokens of one request as sent: each message's role and content, tool calls, and the tool specs. */
export function requestTokens(messages: readonly ChatMessage[], tools: readonly ToolSpec[] = []): number {
  // ~3 tokens of chat framing per message, as the Chat Completions format adds.
  let n = 3;
  for (const m of messages) {
    n += 3 + countTokens(m.role) + countTokens(m.content ?? '');
    if (m.role === 'assistant' && m.toolCalls) n += countTokens(JSON.stringify(m.toolCalls));
  }
  return tools.length ? n + countTokens(JSON.stringify(tools)) : n;
}

export interface PromptBenchResult {
  tokenizer: string;
  incident: string;
  promptHash: string;
  rerank: number;
  verify: number;
  recallPath: number;
  investigation: { calls: number; tokens: number };
  target: number;
}

/** Wraps a model to count every request's prompt tokens. */
function counting(model: ModelPort, into: number[]): ModelPort {
  return { name: model.name, chat: async (req: ChatRequest) => (into.push(requestTokens(req.messages, req.tools)), model.chat(req)) };
}

export async function runPromptBench(): Promise<PromptBenchResult> {
  const scenario = JSON.parse(await readFile(SCENARIO, 'utf8')) as Scenario;
  const { snapshot } = await loadSnapshot(BUNDLED_CATALOG);
  const incident = scenarioIncident(scenario);
  const config = defaultConfig();
  const options = investigatorOptions({ ...config, model: defaultModelBlock() });

  // Recall path: rerank over the top rerank_k agreeing candidates, then verify over confirm's output.
  const names = alertNameContext(incident.alertname, snapshot.knownAlerts);
  const q = buildQuery(incident);
  const agreeing = snapshot.index.search(q.tokens, config.recall.k, q.weights).filter((c) => {
    const v = structuralGate(c.entry, incident, names);
    return v.passed && (v.tier === 'exact' || v.tier === 'namespace');
  });
  const top = agreeing[0];
  if (!top) throw new Error('prompt bench: the bundled catalog has no agreeing entry for the checkout-oom incident');
  const rerank = requestTokens(
    rerankMessages(
      incident,
      agreeing.slice(0, config.recall.rerank_k).map((c) => c.entry),
    ),
  );
  const tools = scenarioTools(scenario);
  const share = Math.floor(config.tools.review_cap_bytes / 2);
  const evidence = await Promise.all(
    ['pod_status', 'events'].map(async (t) => {
      const r = await tools.callTool(t, { namespace: 'payments' }, { signal: new AbortController().signal, timeoutMs: 1000 });
      return { tool: `k8s__${t}`, text: Buffer.from(r.text).subarray(0, share).toString('utf8') };
    }),
  );
  const recalled = recallFinding(top.entry, 0.85, { model: 'bench', promptHash: PROMPT_HASH, allowlist: [] });
  const verify = requestTokens(verifyMessages(incident, recalled, evidence, `recalled from catalog entry ${top.entry.id}`));

  // Full investigation of the same incident: the real loop, every request counted.
  const counted: number[] = [];
  const model = counting(scriptedModel('bench', scenario.fake as Script), counted);
  const inv = new Investigator({
    models: { main: model, verify: model, rerank: model },
    tools: [tools],
    catalog: () => snapshot,
    findings: new InMemoryFindingStore(),
    meter: new InMemoryTokenMeter(),
    clock: systemClock,
    logger: silentLogger,
    options: { ...options, tools: { ...options.tools, allow: [...BUILTIN_TOOL_NAMES, ...Object.keys(scenario.tools).map((t) => `k8s__${t}`)] } },
  });
  const r = await inv.run({ incident }, () => {});
  if (r.status !== 'completed') throw new Error(`prompt bench: the replayed investigation ended ${r.status}: ${r.detail}`);
  return {
    tokenizer: 'o200k_base (gpt-tokenizer)',
    incident: incident.triggerKey,
    promptHash: PROMPT_HASH,
    rerank,
    verify,
    recallPath: rerank + verify,
    investigation: { calls: counted.length, tokens: counted.reduce((a, b) => a + b, 0) },
    target: RECALL_PATH_TARGET,
  };
}

export function renderPromptBench(p: PromptBenchResult): string {
  const ok = p.recallPath <= p.target ? '✓' : '✗';
  return [
    `Prompt tokens per path (${p.tokenizer}, prompts ${p.promptHash}, incident ${p.incident}):`,
    `  recall path: rerank ${p.rerank} + verify ${p.verify} = ${p.recallPath} tokens (target ≤ ${p.target} ${ok})`,
    `  full investigation of the same incident: ${p.investigation.tokens} tokens over ${p.investigation.calls} model calls (×${(p.investigation.tokens / p.recallPath).toFixed(1)} the recall path)`,
  ].join('\n');
}
