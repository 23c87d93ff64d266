/**
 * `REPRISE_TRANSCRIPT`: every message any surface took — Slack, Matrix, the console — appended
 * as one JSON line, the text as the console shows it (plain, escaped, people by display name).
 * Appended synchronously, right after the surface accepted the message, so a test that reads
 * the file after a delivery sees it; created owner-only (it holds alert text and notes).
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { CardView } from '../../core/chat/thread-view.js';
import type { Answer } from '../../core/types.js';
import type { Logger } from '../../ports/logger.js';
import type { SentMessage, Transcript } from '../../ports/transcript.js';
import { renderConsoleCard, renderConsoleEphemeral, renderConsoleReply, renderConsoleThread } from './render-console.js';

/** One line of the transcript file. */
export interface TranscriptLine {
  /** The surface that took it: `console`, `slack`, `matrix`. */
  surface: string;
  /** The thread root's id on that surface (a console thread id, a Slack ts, a Matrix event id); '' for a private answer outside one. */
  threadId: string;
  /** `rca` (a thread root), `detail`, a notice's topic (`resolved`, `silenced`, `note`, …), `update`, `ephemeral`. */
  kind: string;
  triggerKey: string;
  answer: Answer | null;
  text: string;
}

function answerOf(card: CardView): Answer | null {
  const h = card.headline;
  if (h.answer === 'none' || h.entry === undefined) return null;
  return { kind: h.answer === 'instant' ? 'incident' : 'runbook', entry: h.entry, confidence: h.confidence ?? 0 };
}

/** The transcript line of a message a surface took. */
export function transcriptLine(m: SentMessage): TranscriptLine {
  const base = { surface: m.transport, threadId: m.root?.id ?? '', triggerKey: m.triggerKey ?? '' };
  const v = m.view;
  if (v.kind === 'card' && m.op === 'post')
    return { ...base, kind: 'rca', triggerKey: v.triggerKey, answer: answerOf(v), text: renderConsoleThread(v, m.detail) };
  if (v.kind === 'card') return { ...base, kind: 'update', triggerKey: v.triggerKey, answer: answerOf(v), text: renderConsoleCard(v).join('\n') };
  if (v.kind === 'ephemeral') return { ...base, kind: 'ephemeral', answer: null, text: renderConsoleEphemeral(v) };
  return {
    ...base,
    kind: v.kind === 'notice' ? v.topic : 'detail',
    ...(v.kind === 'detail' && !m.triggerKey ? { triggerKey: v.triggerKey } : {}),
    answer: null,
    text: renderConsoleReply(v),
  };
}

export class TranscriptFile implements Transcript {
  readonly #file: string;
  readonly #log: Logger;
  #warned = false;

  constructor(file: string, logger: Logger) {
    this.#file = file;
    this.#log = logger;
    mkdirSync(dirname(file), { recursive: true });
  }

  record(m: SentMessage): void {
    try {
      appendFileSync(this.#file, `${JSON.stringify(transcriptLine(m))}\n`, { mode: 0o600 });
    } catch (err) {
      // A transcript is a record, not a delivery: a full disk is said once, never fails a send.
      if (!this.#warned) this.#log.warn({ err: err instanceof Error ? err.message : String(err), file: this.#file }, 'cannot append to the transcript');
      this.#warned = true;
    }
  }
}
