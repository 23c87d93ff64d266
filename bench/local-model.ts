/**
 * A minimal OpenAI-compatible Chat Completions endpoint on 127.0.0.1 for the storm bench: just
 * enough for `reprise serve` to run real investigations (rerank, investigate, verify) through
 * the real `openai` SDK, each answer after a fixed latency and with token usage. It tells the
 * three calls apart by their system prompt and answers each with a valid JSON object: rerank
 * "none" (the synthetic storm has no catalog answer), a Finding naming the alert's workload,
 * and a "supported" review. Not a fake to test against (that is test/fakes/openai-fake.ts): a
 * bench target.
 */
import { createServer, type Server } from 'node:http';
import { INVESTIGATE_SYSTEM, RERANK_SYSTEM, VERIFY_SYSTEM } from '../src/core/investigate/prompts.js';

export type ModelPurpose = 'rerank' | 'investigate' | 'verify';

export interface LocalModelReply {
  status: number;
  body: Record<string, unknown>;
  purpose?: ModelPurpose;
}

interface WireRequest {
  model?: unknown;
  messages?: unknown;
}

/** ~4 characters a token: what a tokenizer roughly gives for English and JSON. */
const tokens = (s: string): number => Math.max(1, Math.ceil(s.length / 4));

function purposeOf(system: string): ModelPurpose | undefined {
  if (system === INVESTIGATE_SYSTEM) return 'investigate';
  if (system === VERIFY_SYSTEM) return 'verify';
  if (system === RERANK_SYSTEM) return 'rerank';
  return undefined;
}

/** The answer the investigator asks for, naming what the prompt's alert block says. */
function finding(prompt: string): Record<string, unknown> {
  const workload = /^workload: (.+)$/m.exec(prompt)?.[1]?.trim() ?? 'the alerting workload';
  const storm = /one of (\d+) alerts that fired together/.exec(prompt)?.[1];
  const scope = storm ? `${storm} coalesced alerts` : 'the alert';
  return {
    summary: `Crash loop on ${workload} (${scope}): the container exits on start after a bad config rollout.`,
    verdict: 'action_suggested',
    confidence: 0.72,
    rootCauses: [
      {
        cause: `A config change rolled out to ${workload} makes the container exit on start.`,
        confidence: 0.72,
        evidence: ['restart count rising; last state terminated with exit code 1'],
        entities: [workload],
      },
    ],
    suggestedActions: [{ action: `Roll back the last rollout of ${workload}.`, reversible: true }],
    ruledOut: [{ cause: 'Node pressure', reason: 'other workloads on the same nodes are healthy' }],
    openQuestions: [],
    dataGaps: ['no read tools are configured in the bench'],
  };
}

/**
 * The Chat Completions answer to one request body (parsed JSON): 200 with one choice and
 * usage, or 400 with an OpenAI-shaped error for a request it cannot place.
 */
export function localModelReply(body: unknown, seq = 0): LocalModelReply {
  const req = (typeof body === 'object' && body !== null ? body : {}) as WireRequest;
  const messages = Array.isArray(req.messages) ? (req.messages as Array<{ role?: unknown; content?: unknown }>) : [];
  const text = (m: { content?: unknown } | undefined): string => (typeof m?.content === 'string' ? m.content : '');
  const system = messages[0]?.role === 'system' ? text(messages[0]) : '';
  const purpose = purposeOf(system);
  if (purpose === undefined || messages.length < 2) {
    return {
      status: 400,
      body: { error: { message: 'local bench model: expected a Reprise rerank, investigate or verify prompt', type: 'invalid_request_error' } },
    };
  }
  const prompt = messages
    .slice(1)
    .map((m) => text(m))
    .join('\n');
  const answer =
    purpose === 'rerank'
      ? { entry: 'none', confidence: 0.1, reason: 'no candidate names this workload' }
      : purpose === 'verify'
        ? { verdict: 'supported', confidence: 0.7, reasons: ['the evidence names the same workload'] }
        : finding(prompt);
  const content = JSON.stringify(answer);
  const promptTokens = messages.reduce((n, m) => n + tokens(text(m)), 0);
  const completionTokens = tokens(content);
  return {
    status: 200,
    purpose,
    body: {
      id: `chatcmpl-bench-${seq}`,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: typeof req.model === 'string' ? req.model : 'bench-local',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
    },
  };
}

export interface LocalModel {
  /** Base URL to configure (`…/v1`). */
  baseUrl: string;
  /** Answers sent, by purpose; `refused` counts 4xx answers. */
  served: Record<ModelPurpose | 'refused', number>;
  close(): Promise<void>;
}

export async function startLocalModel(opts: { latencyMs: number }): Promise<LocalModel> {
  const served: LocalModel['served'] = { rerank: 0, investigate: 0, verify: 0, refused: 0 };
  let seq = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let reply: LocalModelReply;
      if (req.method !== 'POST' || !(req.url ?? '').endsWith('/chat/completions')) {
        reply = { status: 404, body: { error: { message: `no route ${req.url ?? ''}`, type: 'invalid_request_error' } } };
      } else {
        try {
          reply = localModelReply(JSON.parse(Buffer.concat(chunks).toString('utf8')), ++seq);
        } catch {
          reply = { status: 400, body: { error: { message: 'body is not JSON', type: 'invalid_request_error' } } };
        }
      }
      setTimeout(() => {
        if (res.destroyed) return;
        if (reply.purpose) served[reply.purpose]++;
        else served.refused++;
        res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
      }, opts.latencyMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    served,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
