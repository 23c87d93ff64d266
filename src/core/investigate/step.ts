/**
 * Steps (SPEC §7): every model turn, tool call and control decision of an investigation, in
 * order, bounded and redacted, delivered to a sink as it happens ("why did it say that?").
 */
import type { Clock } from '../../ports/clock.js';
import type { CallPurpose } from '../../ports/model.js';
import { forStep, redactSecrets } from './redact.js';

interface StepBase {
  /** Investigation id. */
  run: string;
  seq: number;
  at: string;
}

/** One model call. */
export interface ModelStep extends StepBase {
  kind: 'model';
  purpose: CallPurpose;
  model: string;
  outcome: 'ok' | 'malformed' | 'error' | 'no_usage' | 'aborted';
  inputTokens: number;
  outputTokens: number;
  /** Estimated US dollars; null when the model has no price in the table. */
  costUsd: number | null;
  durationMs: number;
  /** Tools the model asked for, by name. */
  toolCalls: string[];
  /** The model's text (bounded, redacted). */
  content?: string;
  error?: string;
}

/** One tool call, made or refused. */
export interface ToolStep extends StepBase {
  kind: 'tool';
  tool: string;
  /** Arguments as JSON (bounded, redacted). */
  args: string;
  outcome: 'ok' | 'error' | 'refused' | 'timeout';
  /** Why it was refused, timed out or failed. */
  reason?: string;
  /** Result bytes before the cap. */
  bytes: number;
  truncated: boolean;
  result?: string;
  durationMs: number;
}

export const NOTE_EVENTS = [
  'queued',
  'started',
  'budget',
  'fallback',
  'repair',
  'cancelled',
  'skipped',
  'degraded',
  'failed',
  'rerank',
  'confirm',
  'verify',
  'recall',
  'completed',
] as const;
export type NoteEvent = (typeof NOTE_EVENTS)[number];

/** A control decision: queued, a budget breach, a fallback, the verify verdict… */
export interface NoteStep extends StepBase {
  kind: 'note';
  event: NoteEvent;
  reason: string;
}

export type Step = ModelStep | ToolStep | NoteStep;
export type NewStep = Omit<ModelStep, keyof StepBase> | Omit<ToolStep, keyof StepBase> | Omit<NoteStep, keyof StepBase>;

/** Receives every Step as it is recorded (the bot's outbox, a log, the CLI). */
export type StepSink = (step: Step) => void | Promise<void>;

export interface RecorderOptions {
  run: string;
  clock: Clock;
  sink: StepSink;
  /** Bytes of text one Step keeps. */
  capBytes: number;
  /** Known secret values to mask (API keys, tokens from config). */
  secrets?: readonly string[];
  /** Told when the sink throws; the run goes on. */
  onSinkError?: (err: unknown) => void;
}

/** Numbers, bounds, redacts and delivers Steps; keeps them for the result. */
export class StepRecorder {
  readonly steps: Step[] = [];
  #seq = 0;
  readonly #o: RecorderOptions;
  constructor(opts: RecorderOptions) {
    this.#o = opts;
  }

  /** Bounds and redacts free text the way every Step does. */
  clean(text: string): string {
    return forStep(text, this.#o.capBytes, this.#o.secrets);
  }

  /** Masks secrets without bounding: tool output on its way to the model (capped by the caller). */
  redact(text: string): string {
    return redactSecrets(text, this.#o.secrets);
  }

  async record(s: NewStep): Promise<Step> {
    const base = { run: this.#o.run, seq: ++this.#seq, at: this.#o.clock.now().toISOString() };
    const step = { ...s, ...base } as Step;
    if (step.kind === 'model' && step.content !== undefined) step.content = this.clean(step.content);
    if (step.kind === 'tool') {
      step.args = this.clean(step.args);
      if (step.result !== undefined) step.result = this.clean(step.result);
    }
    if (step.kind === 'note') step.reason = this.clean(step.reason);
    this.steps.push(step);
    try {
      await this.#o.sink(step);
    } catch (err) {
      this.#o.onSinkError?.(err);
    }
    return step;
  }

  note(event: NoteEvent, reason: string): Promise<Step> {
    return this.record({ kind: 'note', event, reason });
  }
}
