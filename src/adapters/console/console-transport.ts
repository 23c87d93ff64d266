import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { LegacyChatTransport as ChatTransport, OutboundMessage } from '../../ports/chat-transport.js';
import { escapeControl, escapeLine } from '../../core/render/escape-text.js';

export interface ConsoleTransportOptions {
  /** Where the human-readable thread goes (stdout in `serve`). */
  write: (text: string) => void;
  /** `REPRISE_TRANSCRIPT`: every outbound message appended as one JSON line. */
  transcriptFile?: string;
  /**
   * Distinguishes this process's threads from earlier runs' (ids are stored in the ledger and
   * replied into after a restart). Default: the start time in base 36.
   */
  runId?: string;
}

/** One line of the transcript file, the console transport's machine-readable output. */
export interface TranscriptLine {
  threadId: string;
  kind: OutboundMessage['kind'];
  triggerKey: string;
  answer: OutboundMessage['answer'];
  text: string;
}

/**
 * Local chat surface: threads are printed as boxed blocks; replies are indented under their
 * thread id. The transcript is appended synchronously so a test that reads it right after the
 * webhook's 2xx sees every message already delivered.
 */
export class ConsoleTransport implements ChatTransport {
  #seq = 0;
  readonly #opts: ConsoleTransportOptions;
  readonly #runId: string;

  constructor(opts: ConsoleTransportOptions) {
    this.#opts = opts;
    this.#runId = opts.runId ?? Date.now().toString(36);
    if (opts.transcriptFile) mkdirSync(dirname(opts.transcriptFile), { recursive: true });
  }

  async post(message: OutboundMessage): Promise<{ threadId: string }> {
    const threadId = `console-${this.#runId}-${++this.#seq}`;
    const bar = '─'.repeat(72);
    // Escaped again here: whatever reaches a terminal must not be able to drive it.
    this.#opts.write(`\n┌${bar}\n│ thread ${threadId}\n${prefix(escapeControl(message.text), '│ ')}\n└${bar}\n`);
    this.#record({ threadId, ...pick(message) });
    return { threadId };
  }

  async reply(threadId: string, message: OutboundMessage): Promise<void> {
    this.#opts.write(`  ↳ [${escapeLine(threadId)}] ${escapeControl(message.text).replace(/\n/g, '\n    ')}\n`);
    this.#record({ threadId, ...pick(message) });
  }

  async close(): Promise<void> {}

  #record(line: TranscriptLine): void {
    if (!this.#opts.transcriptFile) return;
    appendFileSync(this.#opts.transcriptFile, `${JSON.stringify(line)}\n`);
  }
}

function pick(m: OutboundMessage): Omit<TranscriptLine, 'threadId'> {
  return { kind: m.kind, triggerKey: m.triggerKey, answer: m.answer, text: m.text };
}

function prefix(text: string, p: string): string {
  return text
    .split('\n')
    .map((l) => p + l)
    .join('\n');
}
