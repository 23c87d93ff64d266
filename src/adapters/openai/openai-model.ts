/**
 * ModelPort on the official `openai` SDK: Chat Completions with tool calling against any
 * OpenAI-compatible server (OpenAI, Azure's OpenAI-compatible endpoint, vLLM, Ollama,
 * LiteLLM). The SDK's types stop here.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type { ChatCompletionCreateParamsNonStreaming, ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ModelError, type ChatMessage, type ChatRequest, type ChatResponse, type ModelPort } from '../../ports/model.js';
import { redactText } from '../../core/redact.js';

export interface OpenAIModelOptions {
  baseUrl: string;
  model: string;
  /** Omit for local servers that need none. */
  apiKey?: string;
  /** Per-call timeout. */
  timeoutMs: number;
  /** SDK retries (429, 5xx, connection); 0 in tests. */
  maxRetries: number;
}

function toWire(m: ChatMessage): ChatCompletionMessageParam {
  switch (m.role) {
    case 'system':
    case 'user':
      return { role: m.role, content: m.content };
    case 'tool':
      return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    case 'assistant':
      return {
        role: 'assistant',
        content: m.content,
        ...(m.toolCalls?.length
          ? { tool_calls: m.toolCalls.map((t) => ({ id: t.id, type: 'function' as const, function: { name: t.name, arguments: t.arguments } })) }
          : {}),
      };
  }
}

/** A model server's (or its proxy's) error may echo the request; masked before it is kept. */
function toError(err: unknown): ModelError {
  if (err instanceof ModelError) return err;
  if (err instanceof APIUserAbortError) return new ModelError('aborted', 'the call was aborted', { cause: err });
  if (err instanceof APIConnectionTimeoutError) return new ModelError('timeout', 'the model call timed out', { cause: err });
  if (err instanceof APIConnectionError) return new ModelError('connection', `cannot reach the model endpoint: ${redactText(err.message)}`, { cause: err });
  if (err instanceof APIError && typeof err.status === 'number')
    return new ModelError('http', `the model endpoint answered HTTP ${err.status}: ${redactText(err.message)}`, { status: err.status, cause: err });
  return new ModelError('bad_response', redactText(err instanceof Error ? err.message : String(err)), { cause: err });
}

/**
 * Which request field caps the answer's length. OpenAI's newer (reasoning) models refuse
 * `max_tokens` and want `max_completion_tokens`; most compatible servers (vLLM, Ollama,
 * LiteLLM) know `max_tokens`. OpenAI's own endpoint gets the new name; elsewhere a 400 naming
 * `max_completion_tokens` switches this client over once, for good.
 */
type LengthField = 'max_tokens' | 'max_completion_tokens';

function lengthFieldFor(baseUrl: string): LengthField {
  try {
    return new URL(baseUrl).hostname === 'api.openai.com' ? 'max_completion_tokens' : 'max_tokens';
  } catch {
    return 'max_tokens';
  }
}

const asksForCompletionTokens = (err: unknown): boolean => err instanceof APIError && err.status === 400 && /max_completion_tokens/.test(err.message);

/** One model on one endpoint. */
export function createOpenAIModel(o: OpenAIModelOptions): ModelPort {
  const client = new OpenAI({ baseURL: o.baseUrl, apiKey: o.apiKey ?? 'none', timeout: o.timeoutMs, maxRetries: o.maxRetries });
  let lengthField = lengthFieldFor(o.baseUrl);
  return {
    name: o.model,
    async chat(req: ChatRequest): Promise<ChatResponse> {
      const tools: ChatCompletionTool[] | undefined = req.tools?.length
        ? req.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
        : undefined;
      const body: ChatCompletionCreateParamsNonStreaming = {
        model: o.model,
        messages: req.messages.map(toWire),
        ...(tools ? { tools, tool_choice: 'auto' as const } : {}),
      };
      const send = () => {
        const capped = req.maxOutputTokens === undefined ? body : { ...body, [lengthField]: req.maxOutputTokens };
        return client.chat.completions.create(capped, req.signal ? { signal: req.signal } : {});
      };
      let res;
      try {
        res = await send().catch((err: unknown) => {
          if (req.maxOutputTokens === undefined || lengthField === 'max_completion_tokens' || !asksForCompletionTokens(err)) throw err;
          lengthField = 'max_completion_tokens';
          return send();
        });
      } catch (err) {
        throw toError(err);
      }
      const usage = res.usage;
      if (!usage || typeof usage.prompt_tokens !== 'number' || typeof usage.completion_tokens !== 'number') {
        throw new ModelError('no_usage', `the answer from ${o.model} carried no token usage`);
      }
      const choice = res.choices?.[0];
      if (!choice) throw new ModelError('bad_response', 'the answer had no choices');
      const calls = (choice.message.tool_calls ?? []).flatMap((t) =>
        t.type === 'function' ? [{ id: t.id, name: t.function.name, arguments: t.function.arguments }] : [],
      );
      return {
        content: choice.message.content ?? null,
        toolCalls: calls,
        usage: { input: usage.prompt_tokens, output: usage.completion_tokens },
        model: res.model ?? o.model,
        finishReason: choice.finish_reason ?? 'stop',
      };
    },
  };
}
