/**
 * The model port (SPEC §7): one OpenAI-compatible Chat Completions call with tool calling.
 * Adapters translate an SDK to these types; no provider's name appears in the domain.
 */

/** A tool call the model asked for. `arguments` is the raw JSON text the model wrote. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCallRequest[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A tool offered to the model: name, what it does, JSON Schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Tokens one call spent. The port must report it: budgets are enforced from it. */
export interface TokenUsage {
  input: number;
  output: number;
}

/** Why the engine is calling (recorded on the Step; adapters may ignore it). */
export type CallPurpose = 'rerank' | 'verify' | 'investigate' | 'repair' | 'question';

export interface ChatRequest {
  messages: readonly ChatMessage[];
  /** Offered tools; none → the model must answer in text. */
  tools?: readonly ToolSpec[];
  /** Most tokens the answer may use. */
  maxOutputTokens?: number;
  purpose: CallPurpose;
  signal?: AbortSignal;
}

export interface ChatResponse {
  content: string | null;
  toolCalls: ToolCallRequest[];
  usage: TokenUsage;
  /** The model that answered, as the server names it. */
  model: string;
  /** `stop`, `tool_calls`, `length`, … as the server reports it. */
  finishReason: string;
}

export const MODEL_ERROR_CODES = ['http', 'timeout', 'connection', 'aborted', 'no_usage', 'bad_response'] as const;
export type ModelErrorCode = (typeof MODEL_ERROR_CODES)[number];

/**
 * A failed call, coded so the engine can tell an outage (fall back, degrade) from a turn
 * without usage (fail the run) and from a cancellation.
 */
export class ModelError extends Error {
  override readonly name = 'ModelError';
  readonly code: ModelErrorCode;
  /** HTTP status, when the server answered one. */
  readonly status?: number;
  constructor(code: ModelErrorCode, message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.code = code;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

/**
 * One configured model. `chat` resolves with usage or rejects with a {@link ModelError}
 * (an answer without usage is `no_usage`, never a silent zero).
 */
export interface ModelPort {
  /** Model name, as configured (named in the investigator version and in cost). */
  readonly name: string;
  chat(request: ChatRequest): Promise<ChatResponse>;
}

/** The models an engine uses; verify and rerank default to `main` when not configured apart. */
export interface ModelSet {
  main: ModelPort;
  verify: ModelPort;
  rerank: ModelPort;
  /** Tried after `main` fails or answers malformed twice. */
  fallback?: ModelPort;
}
